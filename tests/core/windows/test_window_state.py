import pytest

from ctxmodes.windows.budget import BudgetTracker
from ctxmodes.windows.compaction import no_summary_compaction
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import window_marker
from ctxmodes.windows.note_entries import NOTE_CUSTOM_TYPE, NOTE_SNAPSHOT_CUSTOM_TYPE
from ctxmodes.windows.notes import NotesStore
from ctxmodes.windows.state import BranchMovedError, WindowState
from ctxmodes.windows.thread_hint import PreviousWindowIds

W0 = WindowIdentity.first("window-0")


def note(action, path, text, timestamp=1):
    return {"protocol": 1, "action": action, "path": path, "text": text, "timestamp": timestamp}


def test_a_managed_branch_without_markers_gets_window_zero(branch):
    branch.user("hello")
    state = WindowState.from_branch(branch.entries)
    assert state.current is None
    marker = state.initial_window_marker()
    assert marker.kind == "window"
    assert marker.identity.window_number == 0
    assert marker.identity.previous_window_id is None
    branch.marker(marker)
    state.observe(branch.entries[-1])
    assert state.current == marker.identity
    assert state.identity.boundary_entry_id == branch.leaf
    assert state.initial_window_marker() is None


def test_identity_is_restored_from_the_latest_window_marker(branch):
    one = W0.advance("window-1")
    branch.marker(window_marker(W0))
    branch.user("a")
    branch.marker(window_marker(one), entry_id="boundary")
    branch.assistant("b")
    state = WindowState.from_branch(branch.entries)
    assert state.current == one
    assert state.identity.boundary_entry_id == "boundary"
    two = state.next_window_marker().identity
    assert two == WindowIdentity("window-0", two.current_window_id, "window-1", 2)


def test_reference_local_rollover_hint(branch):
    branch.marker(window_marker(W0), entry_id="window-entry")
    branch.user("recover me", entry_id="user-entry")
    branch.custom(NOTE_CUSTOM_TYPE, note("write", "/root/notes/checkpoint.md", "progress"))
    state = WindowState.from_branch(branch.entries)
    assert state.thread_hint() == (
        "Recent notes (up to 5, most-recent first):\n"
        "- /root/notes/checkpoint.md (1 line, 8 UTF-8 bytes)\n"
        'Previous window history IDs: {"window_id":"window-0","user_item_ids":["user-entry"]}'
    )
    marker = state.next_window_marker(trim_previous_window=True)
    assert state.thread_hint() in marker.content
    assert marker.details.context_management.trim_previous_window is True
    tree_hint = state.thread_hint(
        PreviousWindowIds("window-0", ["user-entry"], summary_item_id="tree-summary")
    )
    assert tree_hint.endswith(
        '{"window_id":"window-0","summary_item_id":"tree-summary","user_item_ids":["user-entry"]}'
    )


def test_first_window_marker_has_no_hint(branch):
    branch.custom(NOTE_CUSTOM_TYPE, note("write", "/root/notes/a", "x"))
    state = WindowState.from_branch(branch.entries)
    marker = state.next_window_marker()
    assert marker.identity.window_number == 0
    assert "Recent notes" not in marker.content


def test_budget_is_restored_so_resume_does_not_remind_again(branch):
    branch.marker(window_marker(W0))
    live = WindowState()
    for entry in branch.entries:
        live.observe(entry)
    reminder = live.budget.check(live.current, 100)
    assert reminder is not None
    branch.marker(reminder)
    live.observe(branch.entries[-1])

    resumed = WindowState.from_branch(branch.entries)
    assert resumed.budget.check(resumed.current, 100) is None
    fallback = resumed.budget.check(resumed.current, 0)
    assert fallback.kind == "fallback"
    branch.marker(fallback)
    again = WindowState.from_branch(branch.entries)
    assert again.budget.check(again.current, 0) is None
    assert isinstance(again.budget, BudgetTracker)


def test_observe_refuses_an_entry_from_elsewhere(branch):
    branch.marker(window_marker(W0))
    branch.user("a")
    state = WindowState.from_branch(branch.entries)
    from ctxmodes.session.models import MessageEntry, UserMessage

    stray = MessageEntry(
        id="stray",
        parent_id=branch.entries[0].id,
        timestamp="t",
        message=UserMessage(content="b", timestamp=1),
    )
    with pytest.raises(BranchMovedError):
        state.observe(stray)


def test_trim_is_pending_until_its_compaction(branch):
    branch.marker(window_marker(W0))
    branch.marker(window_marker(W0.advance("window-1"), trim_previous_window=True), entry_id="b1")
    state = WindowState.from_branch(branch.entries)
    assert state.pending_trim_window_id == "window-1"
    other = no_summary_compaction(
        boundary_entry_id="b1", default_first_kept_entry_id="x", tokens_before=1, window_id="w9"
    )
    branch.compaction(other.details.dump())
    state.observe(branch.entries[-1])
    assert state.pending_trim_window_id == "window-1"
    trim = no_summary_compaction(
        boundary_entry_id="b1",
        default_first_kept_entry_id="x",
        tokens_before=1,
        window_id="window-1",
    )
    branch.compaction(trim.details.dump())
    state.observe(branch.entries[-1])
    assert state.pending_trim_window_id is None


def test_next_window_without_trim_clears_it(branch):
    branch.marker(window_marker(W0, trim_previous_window=True))
    branch.marker(window_marker(W0.advance()))
    assert WindowState.from_branch(branch.entries).pending_trim_window_id is None


def test_notes_reconstruct_from_the_latest_snapshot_plus_later_entries(branch):
    branch.custom(NOTE_CUSTOM_TYPE, note("write", "/root/notes/old", "gone"))
    live = NotesStore()
    live.observe(branch.entries[-1])
    snapshot = NotesStore()
    snapshot.commit("s", NotesStore().prepare_write("write", "kept", "v1", 5).data)
    branch.custom(NOTE_SNAPSHOT_CUSTOM_TYPE, snapshot.snapshot(6).dump())
    branch.custom(NOTE_CUSTOM_TYPE, note("append", "/root/notes/kept", "+v2", 7))
    branch.custom(NOTE_CUSTOM_TYPE, {"protocol": 1, "action": "bogus"})
    branch.custom(NOTE_CUSTOM_TYPE, note("write", "/root/notes/new", "n", 8))
    rebuilt = WindowState.from_branch(branch.entries).notes
    assert {n.path: n.text for n in rebuilt} == {
        "/root/notes/kept": "v1+v2",
        "/root/notes/new": "n",
    }
    kept = rebuilt.get("/root/notes/kept")
    assert (kept.created_at, kept.updated_at) == (5, 7)

    incremental = WindowState()
    for entry in branch.entries:
        incremental.observe(entry)
    assert {n.path: n.text for n in incremental.notes} == {n.path: n.text for n in rebuilt}


def test_reader_puts_archives_first_and_ranks_summaries(branch):
    from ctxmodes.windows.history import HistoryItem, ItemWindow, StaticSource

    branch.marker(window_marker(W0.advance("window-1")))
    branch.user("parser follow-up", entry_id="u1")
    state = WindowState.from_branch(branch.entries)
    archive = StaticSource(
        [
            ItemWindow(
                "window-0",
                [
                    HistoryItem("window-0", "raw", "user", "parser raw"),
                    HistoryItem("window-0", "sum", "assistant", "parser summary", summary=True),
                ],
            )
        ]
    )
    reader = state.reader(archive)
    assert [w["window_id"] for w in reader.list_windows()["windows"]] == ["window-0", "window-1"]
    found = reader.search_contents("parser")
    assert [i["item_id"] for i in found["items"]] == ["sum", "raw", "u1"]
