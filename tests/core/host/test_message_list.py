"""The host's context list: a stored prefix read on demand, a tail, O(1) snapshots that
later changes on either side never show through."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from ctxmodes.host.message_list import MessageList
from ctxmodes.session.models import AgentMessage, TextContent, UserMessage


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)], timestamp=1)


def _texts(messages: Sequence[AgentMessage]) -> list[str]:
    out = []
    for message in messages:
        assert isinstance(message, UserMessage)
        assert not isinstance(message.content, str)
        block = message.content[0]
        assert isinstance(block, TextContent)
        out.append(block.text)
    return out


class _Stored(Sequence[AgentMessage]):
    """A stored context that counts what is read, as the session's lazy context would."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.indexed: list[int] = []
        self.iterated = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        assert isinstance(index, int)
        self.indexed.append(index)
        return _user(f"s{range(self.count)[index]}")

    def __iter__(self) -> Iterator[AgentMessage]:
        for position in range(self.count):
            self.iterated += 1
            yield _user(f"s{position}")


def test_reading_the_end_of_a_long_context_reads_only_the_end() -> None:
    stored = _Stored(1_000_000)
    messages = MessageList(stored)
    messages.append(_user("t0"))
    assert len(messages) == 1_000_001
    assert _texts([messages[-1], messages[-2], messages[0]]) == ["t0", "s999999", "s0"]
    assert _texts(messages[-3:]) == ["s999998", "s999999", "t0"]
    last_two = [m for _, m in zip(range(2), reversed(messages), strict=False)]
    assert _texts(last_two) == ["t0", "s999999"]
    assert len(stored.indexed) < 10
    assert stored.iterated == 0


def test_a_snapshot_never_sees_later_changes_and_costs_nothing() -> None:
    stored = _Stored(3)
    messages = MessageList(stored, [_user("t0")])
    snapshot = messages.snapshot()
    messages.append(_user("t1"))
    assert _texts(snapshot) == ["s0", "s1", "s2", "t0"]
    # The snapshot appends past its own end: the other list's message is not there.
    snapshot.append(_user("x"))
    assert _texts(snapshot) == ["s0", "s1", "s2", "t0", "x"]
    assert _texts(messages) == ["s0", "s1", "s2", "t0", "t1"]
    assert stored.iterated == 9  # the three listings above; the snapshot copied nothing


def test_appending_to_a_snapshot_first_does_not_reach_the_original() -> None:
    messages = MessageList(_Stored(1), [_user("t0")])
    snapshot = messages.snapshot()
    snapshot.append(_user("x"))
    messages.append(_user("t1"))
    assert _texts(messages) == ["s0", "t0", "t1"]
    assert _texts(snapshot) == ["s0", "t0", "x"]


def test_pop_removes_the_last_message_without_touching_snapshots() -> None:
    messages = MessageList(_Stored(2), [_user("t0")])
    snapshot = messages.snapshot()
    assert _texts([messages.pop()]) == ["t0"]
    assert _texts([messages.pop()]) == ["s1"]
    messages.append(_user("t1"))
    assert _texts(messages) == ["s0", "t1"]
    assert _texts(snapshot) == ["s0", "s1", "t0"]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda m: m.insert(0, _user("new")), ["new", "s0", "s1", "t0"]),
        (lambda m: m.__delitem__(1), ["s0", "t0"]),
        (lambda m: m.__setitem__(0, _user("new")), ["new", "s1", "t0"]),
        (lambda m: m.__setitem__(slice(None), [_user("only")]), ["only"]),
        (lambda m: m.pop(0), ["s1", "t0"]),
        (lambda m: m.extend([_user("a"), _user("b")]), ["s0", "s1", "t0", "a", "b"]),
        (lambda m: m.remove(m[1]), ["s0", "t0"]),
    ],
)
def test_a_plugin_may_edit_the_context_as_a_list(edit, expected) -> None:  # type: ignore[no-untyped-def]
    """Any list edit works; the edited list becomes its own, its snapshots and the list it
    was taken from stay as they were."""
    original = MessageList(_Stored(2), [_user("t0")])
    projection = original.snapshot()
    later = projection.snapshot()
    edit(projection)
    assert _texts(projection) == expected
    assert _texts(original) == _texts(later) == ["s0", "s1", "t0"]
    assert projection == expected_list(expected)


def expected_list(texts: list[str]) -> list[AgentMessage]:
    return [_user(text) for text in texts]
