import json

import pytest

from ctxmodes import CtxmodesError
from ctxmodes.windows.history import HistoryItem, ItemWindow, StaticSource
from ctxmodes.windows.history_reader import HistoryReader
from ctxmodes.windows.notes import NotesStore
from ctxmodes.windows.retrieval import (
    answer_history,
    answer_notes,
    prepare_notes_write,
    run_notes,
)

T0 = 1_767_225_600_000


def history():
    window = ItemWindow(
        "window-0",
        [
            HistoryItem("window-0", "user-entry", "user", "recover me"),
            HistoryItem("window-0", "tool-entry", "tool", "done", tool_name="bash"),
        ],
    )
    return HistoryReader([StaticSource([window])])


class Persist:
    def __init__(self):
        self.calls = []

    def __call__(self, prepared):
        self.calls.append((prepared.custom_type, prepared.data.dump()))
        return f"entry-{len(self.calls)}"


def test_history_result_is_compact_json_plus_details():
    result = answer_history(history(), "list_items", {"window_id": "window-0", "role": "user"})
    expected = {
        "source": "pi-session",
        "items": [
            {
                "window_id": "window-0",
                "item_id": "user-entry",
                "role": "user",
                "truncated_content": "recover me",
                "content_chars": 10,
            }
        ],
    }
    assert not result.is_error
    assert result.details == {"codexHistoryNotes": expected}
    assert result.text == json.dumps(expected, separators=(",", ":"))


def test_history_arguments_are_read_leniently():
    result = answer_history(
        history(), "list_items", {"limit": "2", "role": "", "tool_name": None, "recent_first": 1}
    )
    assert [i["item_id"] for i in result.details["codexHistoryNotes"]["items"]] == [
        "user-entry",
        "tool-entry",
    ]
    limited = answer_history(history(), "list_items", {"limit": 1.0, "recent_first": True})
    assert [i["item_id"] for i in limited.details["codexHistoryNotes"]["items"]] == ["tool-entry"]


def test_history_operations_route():
    reader = history()
    windows = answer_history(reader, "list_windows", {"agent_name": "/root"})
    assert windows.details["codexHistoryNotes"]["windows"] == [
        {"window_id": "window-0", "item_count": 2}
    ]
    found = answer_history(reader, "search_contents", {"query": "done"})
    assert found.details["codexHistoryNotes"]["items"][0]["item_id"] == "tool-entry"
    read = answer_history(
        reader, "read_item", {"window_id": "window-0", "item_id": "entry", "offset_chars": 2}
    )
    assert read.details["codexHistoryNotes"]["item"]["content"] == "cover me"


def test_history_errors_are_results():
    result = answer_history(history(), "read_item", {"window_id": "window-0"})
    assert result.is_error
    assert result.text == "history read_item requires item_id"
    assert answer_history(history(), "erase", {}).text == "history requires a supported action"
    whole = answer_history(history(), "list_windows", {"action": "list_windows"})
    assert not whole.is_error
    refused = answer_history(history(), "list_windows", {"action": "read_item"})
    assert refused.text == "history list_windows does not accept action"


def test_notes_write_then_read_sees_it_at_once():
    store, persist = NotesStore(), Persist()
    written = answer_notes(
        store,
        "write_file",
        {"path": "checkpoint.md", "text": "progress"},
        persist,
        now_ms=lambda: T0,
    )
    assert written.details["codexHistoryNotes"]["file"]["path"] == "/root/notes/checkpoint.md"
    assert persist.calls == [
        (
            "codex-context-note",
            {
                "protocol": 1,
                "action": "write",
                "path": "/root/notes/checkpoint.md",
                "text": "progress",
                "timestamp": T0,
            },
        )
    ]
    read = answer_notes(store, "read_file", {"path": "/root/notes/checkpoint.md"}, persist)
    assert read.details["codexHistoryNotes"]["file"]["content"] == "progress"
    answer_notes(store, "append_to_file", {"path": "checkpoint.md", "text": "!"}, persist)
    assert persist.calls[-1][1]["action"] == "append"
    assert store.get("/root/notes/checkpoint.md").text == "progress!"


def test_notes_list_and_search_arguments():
    store, persist = NotesStore(), Persist()
    for index, name in enumerate(["b", "a"]):
        answer_notes(
            store,
            "write_file",
            {"path": name, "text": f"{name} line"},
            persist,
            now_ms=lambda index=index: T0 + index,
        )
    listed = answer_notes(
        store,
        "list_files_by_prefix",
        {"file_order_by": "created_at", "file_order": "descending", "max_results": "x"},
        persist,
    )
    assert [f["path"] for f in listed.details["codexHistoryNotes"]["files"]] == [
        "/root/notes/a",
        "/root/notes/b",
    ]
    unknown_order = answer_notes(store, "list_files_by_prefix", {"file_order_by": "size"}, persist)
    assert [f["path"] for f in unknown_order.details["codexHistoryNotes"]["files"]] == [
        "/root/notes/a",
        "/root/notes/b",
    ]
    found = answer_notes(store, "search_contents", {"query": "line", "max_files": 1}, persist)
    assert [f["path"] for f in found.details["codexHistoryNotes"]["files"]] == ["/root/notes/a"]
    lines = answer_notes(store, "read_file", {"path": "a", "start_line": "2"}, persist)
    assert lines.details["codexHistoryNotes"]["file"]["start_line"] == 1


def test_notes_failures_are_results_and_write_nothing():
    store, persist = NotesStore(), Persist()
    bad_path = answer_notes(store, "write_file", {"path": "a/../b", "text": "x"}, persist)
    assert bad_path.is_error
    assert bad_path.text == "Note paths cannot contain empty, . or .. components"
    too_big = answer_notes(store, "write_file", {"path": "a", "text": "x" * 1_000_001}, persist)
    assert too_big.text == "Note file exceeds the 1,000,000-byte limit"
    bad_prefix = answer_notes(store, "list_files_by_prefix", {"prefix": 4}, persist)
    assert bad_prefix.text == "Note prefix must be a string"
    missing_text = answer_notes(store, "append_to_file", {"path": "a"}, persist)
    assert missing_text.text == "notes append_to_file requires text"
    assert persist.calls == []


def test_a_prepared_write_changes_nothing_until_committed_and_answers_as_run_notes():
    store, reference = NotesStore(), NotesStore()
    arguments = {"path": "/root/notes/plan.md", "text": "step one"}
    prepared = prepare_notes_write(store, "write_file", arguments, now_ms=lambda: T0)
    assert store.read_file("/root/notes/plan.md")["file"] is None
    store.commit("entry-1", prepared.data)
    expected = run_notes(reference, "write_file", arguments, Persist(), now_ms=lambda: T0)
    assert prepared.result == expected
    assert store.read_file("/root/notes/plan.md") == reference.read_file("/root/notes/plan.md")
    # It checks what run_notes checks, and takes only the calls that write.
    with pytest.raises(CtxmodesError, match="1,000,000-byte limit"):
        prepare_notes_write(
            store, "append_to_file", {"path": "/root/notes/plan.md", "text": "x" * 1_000_000}
        )
    with pytest.raises(ValueError, match="does not write"):
        prepare_notes_write(store, "read_file", {"path": "/root/notes/plan.md"})
