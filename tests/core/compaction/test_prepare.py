from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxmodes.compaction import (
    CompactionSettings,
    find_compaction_boundary,
    prepare_compaction,
)
from ctxmodes.session.models import to_json

KEEP_ONE = CompactionSettings(keep_recent_tokens=1)


def _texts(messages) -> list[Any]:
    return [to_json(m)["content"] for m in messages]


def test_nothing_to_do_on_an_empty_or_freshly_compacted_branch(branch):
    assert prepare_compaction([], KEEP_ONE) is None
    branch.user("q")
    branch.assistant()
    branch.compaction("e1")
    assert prepare_compaction(branch.entries, KEEP_ONE) is None


def test_nothing_to_do_when_everything_is_kept(branch):
    branch.user("q")
    branch.assistant()
    assert prepare_compaction(branch.entries, CompactionSettings()) is None


def test_a_repeat_compaction_starts_at_the_previously_kept_entries(branch):
    branch.user("old")
    branch.assistant(branch.text("old answer"))
    branch.user("kept question")
    branch.assistant(branch.text("kept answer"))
    branch.compaction("e2", summary="first summary")
    branch.user("new question")
    branch.assistant(branch.text("new answer"))
    assert find_compaction_boundary(branch.entries).start_index == 2
    prepared = prepare_compaction(branch.entries, KEEP_ONE)
    assert prepared is not None
    assert prepared.previous_summary == "first summary"
    # The kept messages were never summarized: they go into the new summary, the old
    # compaction summary does not (it arrives as ``previous_summary``).
    assert _texts(prepared.messages_to_summarize) == [
        [branch.text("kept question")],
        [branch.text("kept answer")],
    ]
    # The cut falls on the last answer: its question is summarized as the turn's prefix.
    assert prepared.first_kept_entry_id == "e6"
    assert prepared.is_split_turn
    assert _texts(prepared.turn_prefix_messages) == [[branch.text("new question")]]


def test_the_cut_never_lands_on_a_tool_result(branch):
    branch.user("q")
    branch.assistant(branch.tool_call("read", path="a"))
    branch.tool_result("r" * 400)
    branch.assistant(branch.text("done"))
    prepared = prepare_compaction(branch.entries, CompactionSettings(keep_recent_tokens=50))
    assert prepared is not None
    # The budget runs out inside the tool result; the kept part starts after it.
    assert prepared.first_kept_entry_id == "e3"


def test_metadata_just_before_the_cut_is_kept_with_it(branch):
    branch.user("q1")
    branch.assistant()
    branch.label()
    branch.user("q2")
    prepared = prepare_compaction(branch.entries, KEEP_ONE)
    assert prepared is not None
    assert prepared.first_kept_entry_id == "e2"


def test_file_lists_carry_over_unless_a_plugin_wrote_the_summary(branch):
    details = {"readFiles": ["r.txt"], "modifiedFiles": ["m.txt"]}
    branch.user("q")
    branch.assistant(branch.tool_call("write", path="w.txt"))
    branch.compaction("e1", details=details)
    branch.user("q2")
    branch.assistant(branch.tool_call("read", path="new.txt"))
    branch.user("q3")
    ours = prepare_compaction(branch.entries, KEEP_ONE)
    assert ours is not None
    assert ours.file_ops.read == ("r.txt", "new.txt")
    assert ours.file_ops.edited == ("m.txt",)
    assert ours.file_ops.written == ("w.txt",)
    plugin = [*branch.entries]
    plugin[2] = plugin[2].model_copy(update={"from_hook": True})
    theirs = prepare_compaction(plugin, KEEP_ONE)
    assert theirs is not None
    assert theirs.file_ops.read == ("new.txt",)
    assert theirs.file_ops.edited == ()


def test_stored_json_and_models_give_the_same_preparation(branch):
    branch.user("q")
    branch.assistant(branch.tool_call("edit", path="a.py"))
    branch.tool_result("ok")
    branch.user("q2")
    branch.assistant(branch.text("x" * 100))
    from_models = prepare_compaction(branch.entries, KEEP_ONE)
    from_json = prepare_compaction([to_json(e) for e in branch.entries], KEEP_ONE)
    assert from_models is not None
    assert from_json is not None
    assert from_models.model_dump() == from_json.model_dump()


class _Recording(Sequence[Any]):
    """A branch that records which entries were read."""

    def __init__(self, entries: list[Any]) -> None:
        self.entries = entries
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, index: Any) -> Any:
        assert isinstance(index, int)
        self.read.add(index % len(self.entries))
        return self.entries[index]


def test_only_the_part_since_the_previous_compaction_is_read(branch):
    for i in range(500):
        branch.user(f"question {i}")
        branch.assistant(branch.text("answer " * 20))
    kept = branch.entries[-10].id
    branch.compaction(kept)
    for i in range(5):
        branch.user(f"more {i}")
        branch.assistant(branch.text("reply " * 20))
    recording = _Recording(branch.entries)
    assert prepare_compaction(recording, CompactionSettings(keep_recent_tokens=40)) is not None
    # Sessions grow without bound; a compaction must not cost more than what it summarizes.
    assert min(recording.read) == len(branch.entries) - 21
