"""The contract against the real session store: markers and notes written through
``SessionManager``, state kept current through ``subscribe``, files re-read byte for byte."""

import pytest

from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import AssistantMessage, Cost, TextContent, Usage, UserMessage
from ctxmodes.windows.marker import parse_marker_details
from ctxmodes.windows.retrieval import answer_history, answer_notes
from ctxmodes.windows.state import BranchMovedError, TrackedWindowState, WindowState

USAGE = Usage(
    input=1,
    output=1,
    cache_read=0,
    cache_write=0,
    total_tokens=2,
    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
)


def append_marker(manager, marker):
    return manager.append_custom_message_entry(
        marker.custom_type, marker.content, marker.display, marker.details.dump()
    )


def persist_note(manager):
    return lambda prepared: manager.append_custom_entry(prepared.custom_type, prepared.data.dump())


def assistant(text):
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="a",
        provider="p",
        model="m",
        usage=USAGE,
        stop_reason="stop",
        timestamp=2,
    )


@pytest.fixture
def session(tmp_path):
    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    yield manager
    manager.close()


def test_subscribed_state_follows_appends(session):
    state = WindowState.from_branch(session.get_branch())
    session.subscribe(state.observe)

    append_marker(session, state.initial_window_marker())
    user_id = session.append_message(UserMessage(content="recover me", timestamp=1))
    session.append_message(assistant("on it"))
    write = answer_notes(
        state.notes,
        "write_file",
        {"path": "checkpoint.md", "text": "progress"},
        persist_note(session),
    )
    assert not write.is_error
    # Subscription applied the entry first; the retrieval's commit must not apply it twice.
    assert state.notes.get("/root/notes/checkpoint.md").text == "progress"

    first = state.current
    marker = state.next_window_marker(trim_previous_window=True)
    assert f'"user_item_ids":["{user_id}"]' in marker.content
    assert "- /root/notes/checkpoint.md (1 line, 8 UTF-8 bytes)" in marker.content
    boundary = append_marker(session, marker)
    assert state.current.previous_window_id == first.current_window_id
    assert state.identity.boundary_entry_id == boundary

    listed = answer_history(state.reader(), "list_windows", {})
    assert [w["item_count"] for w in listed.details["codexHistoryNotes"]["windows"]] == [2, 0]

    rebuilt = WindowState.from_branch(session.get_branch())
    assert rebuilt.current == state.current
    assert {n.path: n.text for n in rebuilt.notes} == {n.path: n.text for n in state.notes}


def test_a_bare_subscribed_state_refuses_entries_from_elsewhere(session):
    state = WindowState.from_branch(session.get_branch())
    session.subscribe(state.observe)
    append_marker(session, state.initial_window_marker())
    first = session.append_message(UserMessage(content="a", timestamp=1))
    session.append_message(assistant("b"))
    session.branch(first)
    with pytest.raises(BranchMovedError):
        session.append_message(UserMessage(content="c", timestamp=1))


def test_tracked_state_rebuilds_after_the_leaf_moves(session):
    tracked = TrackedWindowState(session)
    append_marker(session, tracked.state.initial_window_marker())
    first = session.append_message(UserMessage(content="a", timestamp=1))
    session.append_message(assistant("b"))
    before = tracked.state
    assert [w.item_count for w in before.history.windows()] == [2]
    session.append_message(UserMessage(content="forward", timestamp=1))
    assert tracked.state is before  # followed incrementally, not rebuilt

    session.branch(first)
    assert tracked.state is not before
    assert [w.item_count for w in tracked.state.history.windows()] == [1]
    session.append_message(UserMessage(content="c", timestamp=1))
    session.append_message(assistant("d"))
    assert [w.item_count for w in tracked.state.history.windows()] == [3]

    session.reset_leaf()
    session.append_message(UserMessage(content="new root", timestamp=1))  # no error
    assert tracked.state.current is None
    assert tracked.state.initial_window_marker() is not None
    tracked.close()


def test_persisted_lines_round_trip_byte_for_byte(session, tmp_path):
    # A session's file is written from its first message on.
    session.append_message(UserMessage(content="start", timestamp=1))
    state = WindowState.from_branch(session.get_branch())
    session.subscribe(state.observe)
    append_marker(session, state.initial_window_marker())
    answer_notes(
        state.notes, "append_to_file", {"path": "n.md", "text": "é\n"}, persist_note(session)
    )
    append_marker(session, state.next_window_marker(trim_previous_window=True))
    session.append_custom_entry("codex-context-note-snapshot", state.notes.snapshot(1).dump())
    session.flush()
    lines = session.session_file.read_bytes().splitlines(keepends=True)[1:]

    reopened = SessionManager.open(session.session_file, read_only=True)
    try:
        for line, entry in zip(lines, reopened.get_entries(), strict=True):
            record = codec.loads(line)
            if record["type"] == "custom_message":
                details = parse_marker_details(entry.details)
                record["details"] = details.dump()
            assert codec.dumps_line(record) == line
        assert WindowState.from_branch(reopened.get_branch()).current == state.current
    finally:
        reopened.close()
