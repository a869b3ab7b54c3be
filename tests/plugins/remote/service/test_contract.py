"""One history/notes contract, two backends: Local's (the context-window kit over a session
branch, as Local mode answers) and the service's (the same operations over HTTPS, encrypted),
the service once over SQLite and once over Postgres.

Each test drives a backend through ``record`` (windows of ``(item_id, role, text)``) and
``call`` (an operation and its arguments → the plain result, or ``{"error": …}``) and asserts
the contract's limits, defaults, ordering and validation. Results are compared without their
``source`` field, the one thing the backends say differently.
"""

from __future__ import annotations

import itertools

import pytest

from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE, window_marker
from ctxmodes.windows.note_entries import NOTE_CUSTOM_TYPE
from ctxmodes.windows.retrieval import DETAILS_KEY, answer_history, answer_notes
from ctxmodes.windows.state import WindowState
from ctxmodes_remote.service.responses_items import history_items
from ctxmodes_remote.service.storage import open_storage


def _plain(result):
    return {key: value for key, value in result.items() if key != "source"}


class LocalBackend:
    """The kit as Local mode runs it: a window state fed the branch's stored entries."""

    def __init__(self):
        self.state = WindowState()
        self._ids = itertools.count()
        self._identity = None

    def _append(self, entry):
        entry = {"id": entry.pop("id", None) or f"e{next(self._ids)}", **entry}
        entry["parentId"] = self.state.leaf_id
        self.state.observe_stored(entry)
        return entry["id"]

    def record(self, windows):
        for window_id, items in windows:
            self._identity = (
                WindowIdentity.first(window_id)
                if self._identity is None
                else self._identity.advance(window_id)
            )
            marker = window_marker(self._identity)
            self._append(
                {
                    "type": "custom_message",
                    "customType": CONTEXT_WINDOW_CUSTOM_TYPE,
                    "content": marker.content,
                    "display": True,
                    "details": marker.details.dump(),
                }
            )
            for item_id, role, text in items:
                self._append({"type": "message", "id": item_id, "message": _message(role, text)})

    def call(self, family, operation, arguments):
        if family == "history":
            result = answer_history(self.state.reader(), operation, arguments)
        else:

            def persist(prepared):
                return self._append(
                    {
                        "type": "custom",
                        "customType": NOTE_CUSTOM_TYPE,
                        "data": prepared.data.dump(),
                    }
                )

            result = answer_notes(self.state.notes, operation, arguments, persist)
        if result.is_error:
            return {"error": result.text}
        return _plain(result.details[DETAILS_KEY])


def _message(role, text):
    if role == "assistant":
        return {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"role": role, "content": text}


class ServiceBackend:
    """The service over HTTPS; history recorded from Responses items as ``/responses`` does."""

    def __init__(self, service):
        self.service = service

    def record(self, windows):
        for window_id, items in windows:
            responses_items = [
                {
                    "type": "message",
                    "id": item_id,
                    "role": role,
                    "content": [
                        {
                            "type": "output_text" if role == "assistant" else "input_text",
                            "text": text,
                        }
                    ],
                }
                for item_id, role, text in items
            ]
            recorded = history_items(responses_items, window_id, {}, _no_ciphertext)
            # No request is in flight, so the engine's worker thread is idle.
            self.service.engine.record(self.service.alice, "s1", "/root", recorded)

    def call(self, family, operation, arguments):
        return _plain(self.service.call(family, operation, arguments))


def _no_ciphertext(token):
    raise AssertionError("plaintext items hold no ciphertext")


@pytest.fixture(params=["local", "service", "service-postgres"])
def backend(request, make_service, tmp_path):
    if request.param == "local":
        return LocalBackend()
    if request.param == "service":
        return ServiceBackend(make_service())
    url = request.getfixturevalue("postgres_url")
    return ServiceBackend(make_service(storage=open_storage(tmp_path, url)))


# -- notes ----------------------------------------------------------------------------------


def test_notes_write_read_and_line_ranges(backend):
    written = backend.call("notes", "write_file", {"path": "plan.md", "text": "a\nb\nc\nd"})
    assert written["file"]["path"] == "/root/notes/plan.md"
    assert written["file"]["bytes"] == 7
    whole = backend.call("notes", "read_file", {"path": "plan.md"})["file"]
    assert (whole["content"], whole["start_line"], whole["stop_line"]) == ("a\nb\nc\nd", 1, 4)
    middle = backend.call(
        "notes", "read_file", {"path": "plan.md", "start_line": 2, "stop_line": -2}
    )
    assert (middle["file"]["content"], middle["file"]["total_lines"]) == ("b\nc", 4)
    tail = backend.call("notes", "read_file", {"path": "/root/notes/plan.md", "start_line": -1})
    assert tail["file"]["content"] == "d"
    backend.call("notes", "append_to_file", {"path": "plan.md", "text": "\ne"})
    assert (
        backend.call("notes", "read_file", {"path": "plan.md", "start_line": 5})["file"]["content"]
        == "e"
    )
    assert backend.call("notes", "read_file", {"path": "missing.md"}) == {"file": None}


def test_notes_size_limit_is_one_million_utf8_bytes(backend):
    at_limit = "é" * 500_000
    assert (
        backend.call("notes", "write_file", {"path": "big.md", "text": at_limit})["file"]["bytes"]
        == 1_000_000
    )
    over = backend.call("notes", "append_to_file", {"path": "big.md", "text": "x"})
    assert over == {"error": "Note file exceeds the 1,000,000-byte limit"}
    assert backend.call("notes", "read_file", {"path": "big.md"})["file"]["bytes"] == 1_000_000


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("a/../b.md", "Note paths cannot contain empty, . or .. components"),
        ("a//b.md", "Note paths cannot contain empty, . or .. components"),
        ("./b.md", "Note paths cannot contain empty, . or .. components"),
        ("/root/plan.md", "Absolute note paths must use <agent>/notes/<path>"),
        ("/root/notes", "Absolute note paths must use <agent>/notes/<path>"),
    ],
)
def test_notes_paths_are_validated(backend, path, error):
    assert backend.call("notes", "write_file", {"path": path, "text": "x"}) == {"error": error}


def test_notes_tilde_is_literal(backend):
    written = backend.call("notes", "write_file", {"path": "~/x.md", "text": "t"})
    assert written["file"]["path"] == "/root/notes/~/x.md"


@pytest.mark.slow  # writes notes past the listing's limits
def test_notes_listing_limits_and_order(backend):
    for number in range(105):
        backend.call("notes", "write_file", {"path": f"n{number:03d}.md", "text": "t"})
    listed = backend.call("notes", "list_files_by_prefix", {})["files"]
    assert [f["path"] for f in listed] == [f"/root/notes/n{n:03d}.md" for n in range(20)]
    assert len(backend.call("notes", "list_files_by_prefix", {"max_results": 500})["files"]) == 100
    assert len(backend.call("notes", "list_files_by_prefix", {"max_results": 0})["files"]) == 1
    newest = backend.call(
        "notes",
        "list_files_by_prefix",
        {"file_order_by": "name", "file_order": "descending", "max_results": 2},
    )
    assert [f["path"] for f in newest["files"]] == ["/root/notes/n104.md", "/root/notes/n103.md"]


def test_notes_search_is_literal_case_sensitive_and_bounded(backend):
    lines = "\n".join(f"Match {n}" if n % 2 else f"match {n}" for n in range(300))
    for name in ("a.md", "b.md", "c.md"):
        backend.call("notes", "write_file", {"path": name, "text": lines})
    found = backend.call("notes", "search_contents", {"query": "Match", "max_files": 2})
    assert [f["path"] for f in found["files"]] == ["/root/notes/a.md", "/root/notes/b.md"]
    assert len(found["files"][0]["matches"]) == 20
    assert found["files"][0]["matches"][0] == {"line_number": 2, "line": "Match 1"}
    most = backend.call("notes", "search_contents", {"query": "atch", "max_matches_per_file": 999})
    assert len(most["files"][0]["matches"]) == 100
    assert backend.call("notes", "search_contents", {"query": "MATCH"}) == {"files": []}


def test_notes_validation(backend):
    assert backend.call("notes", "write_file", {"path": "a.md", "text": "t", "mode": "x"}) == {
        "error": "notes write_file does not accept mode"
    }
    assert backend.call("notes", "write_file", {"path": "a.md"}) == {
        "error": "notes write_file requires text"
    }
    assert backend.call("notes", "search_contents", {"query": ""}) == {
        "error": "notes search_contents requires query"
    }
    # Empty text is a valid write.
    assert backend.call("notes", "write_file", {"path": "a.md", "text": ""})["file"]["bytes"] == 0


# -- history --------------------------------------------------------------------------------


def test_history_window_listing_limits(backend):
    backend.record([(f"w{n:03d}", [(f"i{n}", "user", f"task {n}")]) for n in range(105)])
    windows = backend.call("history", "list_windows", {})["windows"]
    assert windows[:2] == [
        {"window_id": "w000", "item_count": 1},
        {"window_id": "w001", "item_count": 1},
    ]
    assert len(windows) == 20
    assert len(backend.call("history", "list_windows", {"limit": 1000})["windows"]) == 100
    recent = backend.call("history", "list_windows", {"limit": 1, "recent_first": True})
    assert recent["windows"] == [{"window_id": "w104", "item_count": 1}]
    # A non-integer limit means the default.
    assert len(backend.call("history", "list_windows", {"limit": "5"})["windows"]) == 20


def test_history_item_listing_limits_and_previews(backend):
    items = [
        (f"i{n:02d}", "user" if n % 2 else "assistant", f"{n:02d}" + "x" * 1500) for n in range(30)
    ]
    backend.record([("w0", items)])
    listed = backend.call("history", "list_items", {})["items"]
    # 8,000 characters of preview JSON hold seven previews of 1,000 characters.
    assert len(listed) == 7
    assert set(listed[0]) == {"window_id", "item_id", "role", "truncated_content", "content_chars"}
    assert (len(listed[0]["truncated_content"]), listed[0]["content_chars"]) == (1000, 1502)
    short = backend.call("history", "list_items", {"max_chars_per_item": 10, "limit": 100})
    assert len(short["items"]) == 25
    assert short["items"][0]["truncated_content"] == "00xxxxxxxx"
    users = backend.call(
        "history",
        "list_items",
        {"role": "user", "limit": 2, "recent_first": True, "max_chars_per_item": 2},
    )
    assert [(i["item_id"], i["truncated_content"]) for i in users["items"]] == [
        ("i29", "29"),
        ("i27", "27"),
    ]
    assert backend.call("history", "list_items", {"window_id": "nope"})["items"] == []


def test_history_read_item_ranges_and_ids(backend):
    backend.record(
        [("w0", [("entry-0001", "user", "y" * 9000)]), ("w1", [("entry-0002", "user", "z")])]
    )
    first = backend.call("history", "read_item", {"window_id": "w0", "item_id": "entry-0001"})
    assert len(first["item"]["content"]) == 8000
    assert (first["item"]["total_chars"], first["item"]["next_offset_chars"]) == (9000, 8000)
    rest = backend.call(
        "history", "read_item", {"window_id": "w0", "item_id": "0001", "offset_chars": 8000}
    )
    assert rest["item"]["item_id"] == "entry-0001"
    assert (len(rest["item"]["content"]), "next_offset_chars" in rest["item"]) == (1000, False)
    wrong_window = backend.call(
        "history", "read_item", {"window_id": "w1", "item_id": "entry-0001"}
    )
    assert wrong_window == {"item": None}


def test_history_search_is_literal_and_case_sensitive(backend):
    backend.record(
        [
            ("w0", [("a", "user", "the Needle is here"), ("b", "assistant", "needle lower")]),
            ("w1", [("c", "user", "Needle again")]),
        ]
    )
    found = backend.call("history", "search_contents", {"query": "Needle"})["items"]
    assert [(i["window_id"], i["item_id"]) for i in found] == [("w0", "a"), ("w1", "c")]
    newest = backend.call("history", "search_contents", {"query": "Needle", "recent_first": True})
    assert newest["items"][0]["item_id"] == "c"
    in_window = backend.call("history", "search_contents", {"query": "eedle", "window_id": "w0"})
    assert [i["item_id"] for i in in_window["items"]] == ["a", "b"]
    assert backend.call("history", "search_contents", {"query": "N.edle"})["items"] == []
    by_role = backend.call("history", "search_contents", {"query": "eedle", "role": "assistant"})
    assert [i["item_id"] for i in by_role["items"]] == ["b"]


def test_history_validation(backend):
    assert backend.call("history", "read_item", {"window_id": "w0"}) == {
        "error": "history read_item requires item_id"
    }
    assert backend.call("history", "list_items", {"query": "x"}) == {
        "error": "history list_items does not accept query"
    }
    assert backend.call("history", "search_contents", {}) == {
        "error": "history search_contents requires query"
    }
