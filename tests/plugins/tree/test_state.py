"""Tree's indexes over real session files: history, projection, notes, resume."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from ctxmodes.events import ContextProjection
from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import BranchSummaryMessage
from ctxmodes.windows.history import ItemFilter
from ctxmodes.windows.marker import reminder_marker
from ctxmodes.windows.projection import is_marker_message
from ctxmodes.windows.retrieval import answer_history, answer_notes
from ctxmodes_tree.projection import project_tree_context
from ctxmodes_tree.state import TreeState
from ctxmodes_tree.traversal import ArchiveLimits

EMPTY_SNAPSHOT = {"protocol": 1, "timestamp": 1, "files": []}


def history(state: TreeState, action: str, **arguments) -> dict:
    result = answer_history(state.reader(), action, arguments)
    assert not result.is_error, result.text
    return json.loads(result.text)


def projected(manager: SessionManager, state: TreeState) -> list:
    projection = ContextProjection(
        messages=list(manager.build_session_context().messages),
        branch=list(manager.get_branch()),
    )
    return project_tree_context(projection, state.archives)


def build(script, rollovers: int = 2) -> list[str]:
    summaries = []
    for window in range(rollovers):
        script.exchange(window, detail=f"secret-{window}")
        summaries.append(script.rollover(f"Summary of window {window}", EMPTY_SNAPSHOT))
    script.exchange(rollovers, detail="current")
    return summaries


def test_history_lists_archived_windows_then_the_current_one(manager, script) -> None:
    state = TreeState(manager)
    summaries = build(script)
    windows = history(state, "list_windows")["windows"]
    assert [w["window_id"] for w in windows][-1] == script.identity.current_window_id
    assert len(windows) == 3
    archived = history(state, "list_items", window_id=windows[0]["window_id"], limit=25)
    items = archived["items"]
    assert items[0]["item_id"] == summaries[0]
    assert items[0]["truncated_content"] == "Summary of window 0"
    assert [i["role"] for i in items[1:]] == ["user", "assistant", "tool", "assistant"]
    assert windows[0]["item_count"] == 5


def test_search_is_summary_first_and_reads_are_exact(manager, script) -> None:
    state = TreeState(manager)
    summaries = build(script)
    found = history(state, "search_contents", query="window 1")["items"]
    assert found[0]["item_id"] == summaries[1]  # the summary ranks before raw items
    raw = history(state, "search_contents", query="secret-0")["items"]
    assert len(raw) == 1
    assert raw[0]["role"] == "tool"
    item = history(state, "read_item", window_id=raw[0]["window_id"], item_id=raw[0]["item_id"])
    assert item["item"]["content"] == "output 0 secret-0"
    summary = history(state, "read_item", window_id=raw[0]["window_id"], item_id=summaries[0])
    assert summary["item"]["content"] == "Summary of window 0"


def test_incremental_state_equals_a_resumed_one(manager, script, tmp_path) -> None:
    live = TreeState(manager)
    build(script, rollovers=3)
    path = manager.session_file
    manager.close()
    reopened = SessionManager.open(path)
    try:
        resumed = TreeState(reopened)
        assert resumed.archives.archives == live.archives.archives
        assert resumed.state.current == live.state.current
        assert history(resumed, "list_windows") == history(live, "list_windows")
        query = {"query": "secret", "limit": 25}
        assert history(resumed, "search_contents", **query) == history(
            live, "search_contents", **query
        )
    finally:
        reopened.close()


def test_projection_hides_only_owned_summaries(manager, script) -> None:
    state = TreeState(manager)
    build(script)
    messages = projected(manager, state)
    assert not any(isinstance(m, BranchSummaryMessage) for m in messages)
    assert is_marker_message(messages[0])
    # A manual summary (no manifest) stays visible.
    leaf = manager.get_leaf_id()
    manager.branch_with_summary(leaf, "The user wrote this summary by hand.")
    script.user("after the manual summary")
    summaries = [m for m in projected(manager, state) if isinstance(m, BranchSummaryMessage)]
    assert [m.summary for m in summaries] == ["The user wrote this summary by hand."]


def test_before_the_first_archive_the_latest_window_is_projected(manager, script) -> None:
    state = TreeState(manager)
    script.exchange(0)
    marker = script.identity.advance()
    script.marker(marker)
    script.exchange(1)
    messages = projected(manager, state)
    assert is_marker_message(messages[0])
    assert messages[0].details["contextManagement"]["currentWindowId"] == (marker.current_window_id)


def test_notes_reconstruct_from_the_latest_snapshot(manager, script) -> None:
    state = TreeState(manager)
    script.note("/root/notes/plan.md", "step 1\n")
    script.note("/root/notes/plan.md", "step 2\n", action="append")
    snapshot = state.state.notes.snapshot(5000).dump()
    script.exchange(0)
    script.rollover("s0", snapshot)
    # The notes written in window 0 are on the side branch now; the snapshot carries them.
    script.note("/root/notes/plan.md", "step 3\n", action="append")

    def read(target: TreeState) -> dict:
        result = answer_notes(target.state.notes, "read_file", {"path": "plan.md"}, _no_write)
        return json.loads(result.text)["file"]

    assert read(state)["content"] == "step 1\nstep 2\nstep 3\n"
    assert read(TreeState(manager))["content"] == "step 1\nstep 2\nstep 3\n"


def _no_write(prepared) -> str:
    raise AssertionError("no write expected")


def test_archived_items_are_bounded_newest_first(manager, script) -> None:
    from ctxmodes_tree.traversal import ArchiveLimits

    script.exchange(0, detail="oldest")
    script.exchange(1, detail="newest")
    summary_id = script.rollover("s0", EMPTY_SNAPSHOT)
    state = TreeState(manager, ArchiveLimits(max_items=3))
    (window,) = state.archive_history.windows()
    items = list(window.select(ItemFilter()))
    assert items[0].item_id == summary_id
    assert [i.role for i in items[1:]] == ["assistant", "tool", "assistant"]
    assert "newest" in items[2].content
    assert window.item_count == 4
    newest_line = len(codec.dumps(manager.get_entry_json(window._archive.entry_ids[-1])))
    by_bytes = TreeState(manager, ArchiveLimits(max_bytes=newest_line))
    (small,) = by_bytes.archive_history.windows()
    assert small.item_count == 2  # the summary, and the newest entry that fits


def test_summary_items_need_no_normalization_and_ids_match_by_suffix(manager, script) -> None:
    build(script, rollovers=1)
    state = TreeState(manager)
    (window,) = state.archive_history.windows()
    summary = state.archives.latest.summary
    assert window.find_item(summary.id).summary
    assert window._raw is None  # the exact summary read did not touch the raw items
    assert [i.item_id for i in window.select(ItemFilter(summary=True))] == [summary.id]
    assert window._raw is None
    assert window.find_item(summary.id[-3:]).item_id.endswith(summary.id[-3:])
    raw = list(window.select(ItemFilter(summary=False), reverse=True))
    assert raw[0].role == "assistant"
    assert list(window.select(ItemFilter(), reverse=True))[-1].item_id == summary.id


def test_archived_items_are_normalized_from_stored_entries_like_models(manager, script) -> None:
    from ctxmodes.windows.history_items import item_fields

    build(script, rollovers=3)
    state = TreeState(manager)
    windows = state.archive_history.windows()
    assert len(windows) == 3
    for archive, window in zip(state.archives.archives, windows, strict=True):
        expected = [
            fields
            for fields in (item_fields(manager.get_entry(i)) for i in archive.entry_ids)
            if fields is not None
        ]
        raw = [
            (i.item_id, i.role, i.content, i.tool_name, i.tool_namespace)
            for i in window.raw.select(ItemFilter())
        ]
        assert raw == [tuple(fields) for fields in expected]


def test_archived_windows_search_like_a_plain_scan(manager, script) -> None:
    build(script, rollovers=3)
    state = TreeState(manager)
    for window in state.archive_history.windows():
        for query in ("secret-1", "e", "never there", "window"):
            for reverse in (False, True):
                found = list(window.raw.select(ItemFilter(query=query), reverse=reverse))
                every = window.raw.select(ItemFilter(), reverse=reverse)
                assert found == [item for item in every if query in item.content]


@pytest.mark.parametrize("limits", [ArchiveLimits(), ArchiveLimits(max_items=4)])
def test_a_page_of_a_cold_window_reads_only_its_entries(manager, script, limits) -> None:
    _mixed_window(script, manager)
    script.rollover("s0", EMPTY_SNAPSHOT)
    file = manager.session_file
    manager.flush()
    reopened = SessionManager.open(file, read_only=True)
    try:
        filters = [ItemFilter(), ItemFilter(role="user"), ItemFilter(summary=False)]
        built = TreeState(reopened, limits).archive_history.windows()[0]
        expected = {
            (index, reverse): list(built.raw.select(item_filter, reverse=reverse))
            for index, item_filter in enumerate(filters)
            for reverse in (False, True)
        }
        for (index, reverse), items in expected.items():
            (cold,) = TreeState(reopened, limits).archive_history.windows()
            streamed = list(cold.select(filters[index], reverse=reverse))
            assert [i for i in streamed if not i.summary] == items
            # Taken whole once, what was read is the window's log: the same items again.
            assert cold._raw is not None
            assert list(cold.select(filters[index], reverse=reverse)) == streamed
        (cold,) = TreeState(reopened, limits).archive_history.windows()
        # A page: the first item taken, the rest never read.
        assert next(cold.select(ItemFilter(summary=False))) == expected[(2, False)][0]
        assert cold._raw is None
    finally:
        reopened.close()


def test_a_search_of_a_cold_window_reads_only_as_far_as_its_hits(
    manager, script, monkeypatch
) -> None:
    for n in range(60):
        script.exchange(n, detail=f"d{n}")
    script.rollover("s0", EMPTY_SNAPSHOT)
    file = manager.session_file
    manager.flush()
    reopened = SessionManager.open(file, read_only=True)
    read: list[str] = []
    reading = reopened.read_entries_json

    def counted(entry_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        read.extend(entry_ids)
        return reading(entry_ids)

    monkeypatch.setattr(reopened, "read_entries_json", counted)
    try:
        built = TreeState(reopened).archive_history.windows()[0]
        assert built.raw.item_count > 100  # built from the whole window, read once
        archived = len(read)
        for query, reverse in (("d59", True), ("d0", False), ("never there", False)):
            expected = list(built.raw.select(ItemFilter(query=query), reverse=reverse))
            (cold,) = TreeState(reopened).archive_history.windows()
            read.clear()
            found = cold.select(ItemFilter(query=query, summary=False), reverse=reverse)
            if expected:
                assert next(found) == expected[0]
                # The hit is among the newest (or oldest) entries: one short block read.
                assert 0 < len(read) < archived // 4
                assert cold._raw is None
            else:
                assert list(found) == []
                assert len(read) == archived
                assert cold._raw is not None
    finally:
        reopened.close()


def _mixed_window(script, manager) -> None:
    """A window with every kind of entry that may or may not be an item."""
    script.exchange(0, detail="a")
    manager.append_custom_message_entry("other-plugin", "a string custom message", True, None)
    manager.append_custom_message_entry("other-plugin", [{"type": "text", "text": "x"}], True)
    manager.append_custom_entry("some-state", {"k": 1})
    manager.append_thinking_level_change("high")
    reminder = reminder_marker(script.identity, 1000)
    manager.append_custom_message_entry(
        reminder.custom_type, reminder.content, False, reminder.details.dump()
    )
    script.exchange(1, detail="b")


@pytest.mark.parametrize(
    "limits", [ArchiveLimits(), ArchiveLimits(max_items=4), ArchiveLimits(max_bytes=900)]
)
def test_counts_from_the_index_agree_with_the_items(manager, script, limits) -> None:
    _mixed_window(script, manager)
    script.rollover("s0", EMPTY_SNAPSHOT)
    _mixed_window(script, manager)
    script.rollover("s1", EMPTY_SNAPSHOT)
    file = manager.session_file
    manager.flush()
    # Appended in this process: no stored lines to count from, so items are normalized.
    live = TreeState(manager, limits)
    live_counts = [w.item_count for w in live.archive_history.windows()]
    assert all(w._raw is not None for w in live.archive_history.windows())
    # Resumed: counted from the index, nothing normalized, the same figures.
    reopened = SessionManager.open(file, read_only=True)
    try:
        cold = TreeState(reopened, limits)
        windows = cold.archive_history.windows()
        counts = [w.item_count for w in windows]
        assert all(w._raw is None for w in windows)
        assert counts == live_counts
        assert counts == [1 + len(list(w.raw.select(ItemFilter()))) for w in windows]
        listed = history(cold, "list_windows")["windows"]
        assert [w["item_count"] for w in listed[:2]] == counts
    finally:
        reopened.close()


@pytest.mark.parametrize("limits", [ArchiveLimits(), ArchiveLimits(max_bytes=900)])
def test_an_archive_begun_before_a_resume_and_ended_after_it_counts_right(
    manager, script, limits
) -> None:
    _mixed_window(script, manager)
    file = manager.session_file
    manager.close()
    # Resumed mid-window: the window's first entries are lines of the file, the rest are not.
    resumed = SessionManager.open(file)
    try:
        script.manager = resumed
        _mixed_window(script, resumed)
        script.rollover("s0", EMPTY_SNAPSHOT)
        (window,) = TreeState(resumed, limits).archive_history.windows()
        count = window.item_count
        assert count == 1 + len(list(window.raw.select(ItemFilter())))
        if limits.max_bytes == ArchiveLimits().max_bytes:
            # Each half: two exchanges of four messages, and one string custom message.
            assert count == 1 + 2 * 9
        resumed.flush()
        with SessionManager.open(file, read_only=True) as cold:
            (same,) = TreeState(cold, limits).archive_history.windows()
            assert same.item_count == count
    finally:
        resumed.close()
