import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.windows.note_entries import (
    MAX_NOTE_BYTES,
    NoteEntryData,
    NoteSizeError,
    parse_note_entry,
    parse_note_snapshot,
    utf8_length,
)
from ctxmodes.windows.note_paths import NotePathError
from ctxmodes.windows.notes import (
    MAX_SEARCH_FILES,
    NotesStore,
    iso_from_ms,
    matching_lines,
    matching_texts,
)

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z


class Recorder:
    """Writes through prepare_write + commit, as the local notes tool does."""

    def __init__(self, store=None):
        self.store = NotesStore() if store is None else store
        self.entries = []
        self.ids = itertools.count()

    def write(self, action, path, text, timestamp):
        prepared = self.store.prepare_write(action, path, text, timestamp)
        entry_id = f"e{next(self.ids)}"
        self.entries.append((entry_id, prepared.data.dump()))
        self.store.commit(entry_id, prepared.data)
        return prepared.result


def test_iso_timestamps():
    assert iso_from_ms(T0) == "2026-01-01T00:00:00.000Z"
    assert iso_from_ms(T0 + 1_234) == "2026-01-01T00:00:01.234Z"
    assert iso_from_ms(0) == "1970-01-01T00:00:00.000Z"
    assert iso_from_ms(-1) == "1969-12-31T23:59:59.999Z"


@given(st.integers(min_value=-62_135_596_800_000, max_value=253_402_300_799_999))
def test_iso_timestamps_are_what_the_calendar_gives_for_every_millisecond(milliseconds):
    # The formatting of each second is kept: the text is the same as formatting the moment
    # afresh, before and after the epoch, for every year datetime knows.
    from datetime import UTC, datetime, timedelta

    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=milliseconds)
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    assert iso_from_ms(milliseconds) == expected
    assert iso_from_ms(float(milliseconds)) == expected


def test_write_result_and_entry_data():
    recorder = Recorder()
    result = recorder.write("write", "checkpoint.md", "progress", T0)
    assert result == {
        "source": "pi-session",
        "file": {
            "path": "/root/notes/checkpoint.md",
            "bytes": 8,
            "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:00.000Z",
        },
    }
    _, data = recorder.entries[0]
    assert json.dumps(data, separators=(",", ":")) == (
        '{"protocol":1,"action":"write","path":"/root/notes/checkpoint.md",'
        '"text":"progress","timestamp":1767225600000}'
    )


def test_append_keeps_created_at_and_extends_text():
    recorder = Recorder()
    recorder.write("append", "log.md", "a\n", T0)
    result = recorder.write("append", "log.md", "b", T0 + 5)
    assert result["file"]["bytes"] == 3
    assert result["file"]["created_at"] == iso_from_ms(T0)
    assert result["file"]["updated_at"] == iso_from_ms(T0 + 5)
    assert recorder.store.get("/root/notes/log.md").text == "a\nb"
    # The entry records only what was appended.
    assert recorder.entries[-1][1]["text"] == "b"


def test_write_may_be_empty_and_replaces():
    recorder = Recorder()
    recorder.write("write", "x", "long text", T0)
    recorder.write("write", "x", "", T0 + 1)
    note = recorder.store.get("/root/notes/x")
    assert note.text == ""
    assert note.byte_count == 0
    assert note.created_at == T0


def test_size_limit_counts_utf8_bytes_after_the_operation():
    recorder = Recorder()
    recorder.write("write", "big", "é" * (MAX_NOTE_BYTES // 2), T0)
    with pytest.raises(NoteSizeError, match=r"^Note file exceeds the 1,000,000-byte limit$"):
        recorder.write("append", "big", "x", T0 + 1)
    # A failed write leaves nothing behind.
    assert len(recorder.entries) == 1
    assert recorder.store.get("/root/notes/big").byte_count == MAX_NOTE_BYTES
    recorder.write("write", "big", "x" * MAX_NOTE_BYTES, T0 + 2)
    with pytest.raises(NoteSizeError):
        recorder.write("write", "other", "x" * (MAX_NOTE_BYTES + 1), T0 + 3)


def test_note_bytes_names_a_notes_utf8_size_as_read_file_finds_it():
    recorder = Recorder()
    recorder.write("write", "/root/notes/café.md", "é" * 10, T0)
    recorder.write("append", "/root/notes/café.md", "abc", T0 + 1)
    store = recorder.store
    assert store.note_bytes("/root/notes/café.md") == 23
    # Another spelling of the same path (decomposed) names the same note, as for a read.
    assert store.note_bytes("/root/notes/cafe\u0301.md") == 23
    assert store.read_file("/root/notes/cafe\u0301.md")["file"]["bytes"] == 23
    for absent in ("/root/notes/other.md", "../x.md", "", None, 7):
        assert store.note_bytes(absent) == 0


def test_bad_path_is_refused_before_anything_is_written():
    recorder = Recorder()
    with pytest.raises(NotePathError):
        recorder.write("write", "../escape", "x", T0)
    assert recorder.entries == []


def test_commit_is_idempotent():
    store = NotesStore()
    prepared = store.prepare_write("append", "a", "x", T0)
    store.commit("id1", prepared.data)
    store.commit("id1", prepared.data)
    assert store.get("/root/notes/a").text == "x"


def _store_with(*notes):
    recorder = Recorder()
    for path, text, timestamp in notes:
        recorder.write("write", path, text, timestamp)
    return recorder.store


def test_list_files_by_prefix_orders_and_limits():
    store = _store_with(
        ("b.md", "1", T0 + 2),
        ("a.md", "22", T0 + 3),
        ("plans/c.md", "333", T0 + 1),
        ("/root/worker/notes/w.md", "w", T0),
    )
    paths = lambda result: [f["path"] for f in result["files"]]  # noqa: E731
    assert paths(store.list_files_by_prefix()) == [
        "/root/notes/a.md",
        "/root/notes/b.md",
        "/root/notes/plans/c.md",
    ]
    assert paths(store.list_files_by_prefix(file_order="descending"))[0] == "/root/notes/plans/c.md"
    assert paths(store.list_files_by_prefix(file_order_by="created_at")) == [
        "/root/notes/plans/c.md",
        "/root/notes/b.md",
        "/root/notes/a.md",
    ]
    assert paths(store.list_files_by_prefix("plans")) == ["/root/notes/plans/c.md"]
    assert paths(store.list_files_by_prefix("/root/worker/notes")) == ["/root/worker/notes/w.md"]
    assert len(store.list_files_by_prefix(max_results=1)["files"]) == 1
    assert len(store.list_files_by_prefix(max_results=0)["files"]) == 1  # at least one
    listed = store.list_files_by_prefix("a.md")["files"][0]
    assert listed == {
        "path": "/root/notes/a.md",
        "bytes": 2,
        "created_at": iso_from_ms(T0 + 3),
        "updated_at": iso_from_ms(T0 + 3),
    }


def test_list_caps_at_one_hundred():
    store = _store_with(*((f"n{i:03}", "", T0) for i in range(120)))
    assert len(store.list_files_by_prefix(max_results=500)["files"]) == 100
    assert len(store.list_files_by_prefix()["files"]) == 20


LINES = "one\ntwo\nthree\nfour"


@pytest.mark.parametrize(
    ("start", "stop", "content", "start_line", "stop_line"),
    [
        (None, None, LINES, 1, 4),
        (2, 3, "two\nthree", 2, 3),
        (-2, None, "three\nfour", 3, 4),
        (None, -2, "one\ntwo\nthree", 1, 3),
        (0, 0, LINES, 1, 4),
        (3, 1, "", 3, 3),
        (-100, 100, LINES, 1, 4),
        (9, None, "four", 4, 4),
    ],
)
def test_read_file_line_ranges(start, stop, content, start_line, stop_line):
    store = _store_with(("x", LINES, T0))
    file = store.read_file("x", start, stop)["file"]
    assert file["content"] == content
    assert (file["start_line"], file["stop_line"], file["total_lines"]) == (
        start_line,
        stop_line,
        4,
    )
    assert file["path"] == "/root/notes/x"


def test_read_missing_file():
    assert NotesStore().read_file("nothing.md") == {"source": "pi-session", "file": None}


def test_search_contents():
    store = _store_with(
        ("b", "alpha\nbeta\nalphabet", T0 + 1),
        ("a", "no match", T0 + 2),
        ("c", "alpha", T0),
        ("/root/other/notes/d", "alpha", T0),
    )
    result = store.search_contents("alpha")
    assert result == {
        "source": "pi-session",
        "files": [
            {
                "path": "/root/notes/b",
                "matches": [
                    {"line_number": 1, "line": "alpha"},
                    {"line_number": 3, "line": "alphabet"},
                ],
            },
            {"path": "/root/notes/c", "matches": [{"line_number": 1, "line": "alpha"}]},
        ],
    }
    assert [f["path"] for f in store.search_contents("alpha", recent_file_first=True)["files"]] == [
        "/root/notes/b",
        "/root/notes/c",
    ]
    limited = store.search_contents("alpha", max_files=1, max_matches_per_file=1)
    assert limited["files"] == [
        {"path": "/root/notes/b", "matches": [{"line_number": 1, "line": "alpha"}]}
    ]
    assert store.search_contents("ALPHA")["files"] == []
    other = store.search_contents("alpha", path_prefix="/root/other/notes")
    assert [f["path"] for f in other["files"]] == ["/root/other/notes/d"]


def test_matching_texts_takes_the_first_texts_holding_the_query_in_order():
    texts = ["none", "a\nb\na", "b", "xa", "a"]
    assert matching_texts(texts, "a", 1, 2) == [
        (1, [{"line_number": 1, "line": "a"}]),
        (3, [{"line_number": 1, "line": "xa"}]),
    ]
    assert matching_texts(texts, "a", 5, 5)[0] == (
        1,
        [{"line_number": 1, "line": "a"}, {"line_number": 3, "line": "a"}],
    )
    assert matching_texts(texts, "nowhere", 5, 5) == []


def test_search_contents_goes_through_the_notes_with_the_stores_matcher():
    """The matcher is handed the candidates' texts in the search's order and the limits as
    clamped; each index it answers names the note at that place."""
    asked = []

    def matcher(texts, query, match_limit, text_limit):
        asked.append((list(texts), query, match_limit, text_limit))
        return [(1, [{"line_number": 9, "line": "found"}])]

    recorder = Recorder(NotesStore(matcher))
    for path, at in (("b", T0 + 1), ("a", T0 + 3), ("c", T0 + 2)):
        recorder.write("write", path, f"text of {path}", at)
    result = recorder.store.search_contents("q", max_files=10_000, max_matches_per_file=3)
    assert asked == [(["text of a", "text of b", "text of c"], "q", 3, MAX_SEARCH_FILES)]
    assert result["files"] == [
        {"path": "/root/notes/b", "matches": [{"line_number": 9, "line": "found"}]}
    ]
    recent = recorder.store.search_contents("q", recent_file_first=True, max_files=2)
    assert asked[-1] == (["text of a", "text of c", "text of b"], "q", 20, 2)
    assert [found["path"] for found in recent["files"]] == ["/root/notes/c"]


def test_snapshot_shape_and_restore():
    store = _store_with(("b", "2", T0 + 1), ("a", "1", T0))
    snapshot = store.snapshot(T0 + 10)
    data = snapshot.dump()
    assert data == {
        "protocol": 1,
        "timestamp": T0 + 10,
        "files": [
            {"path": "/root/notes/a", "text": "1", "createdAt": T0, "updatedAt": T0},
            {"path": "/root/notes/b", "text": "2", "createdAt": T0 + 1, "updatedAt": T0 + 1},
        ],
    }
    assert parse_note_snapshot(data) == snapshot


def test_snapshot_size_limit():
    store = _store_with(*((f"n{i}", "x" * 900_000, T0) for i in range(12)))
    with pytest.raises(NoteSizeError, match=r"^Context note snapshot exceeds the 10,000,000-byte"):
        store.snapshot(T0)


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"protocol": 2, "action": "write", "path": "p", "text": "t", "timestamp": 1},
        {"protocol": 1, "action": "delete", "path": "p", "text": "t", "timestamp": 1},
        {"protocol": 1, "action": "write", "path": 1, "text": "t", "timestamp": 1},
        {"protocol": 1, "action": "write", "path": "p", "text": None, "timestamp": 1},
        {"protocol": 1, "action": "write", "path": "p", "text": "t", "timestamp": "1"},
        {"protocol": 1, "action": "write", "path": "p", "text": "t", "timestamp": True},
        {"protocol": 1, "action": "write", "path": "p", "text": "t", "timestamp": 1e300},
    ],
)
def test_invalid_note_entries_are_ignored(data):
    assert parse_note_entry(data) is None


def test_float_timestamps_are_numbers_too():
    entry = parse_note_entry(
        {"protocol": 1, "action": "write", "path": "p", "text": "t", "timestamp": 1.5}
    )
    assert entry is not None
    assert entry.dump()["timestamp"] == 1.5


def test_snapshot_with_an_oversized_file_is_invalid():
    data = {
        "protocol": 1,
        "timestamp": T0,
        "files": [{"path": "p", "text": "é" * 500_001, "createdAt": T0, "updatedAt": T0}],
    }
    assert parse_note_snapshot(data) is None


def test_utf8_length_matches_javascript_buffer_length():
    assert utf8_length("abc") == 3
    assert utf8_length("é€😀") == 2 + 3 + 4
    assert utf8_length("\ud800") == 3  # a lone surrogate becomes U+FFFD


operations = st.lists(
    st.tuples(
        st.sampled_from(["append", "write"]),
        st.sampled_from(["a", "b", "dir/c", "/root/worker/notes/d"]),
        st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    ),
    max_size=30,
)


@given(operations)
def test_write_append_replay_is_exact(ops):
    recorder = Recorder()
    expected: dict[str, str] = {}
    for index, (action, path, text) in enumerate(ops):
        result = recorder.write(action, path, text, T0 + index)
        key = result["file"]["path"]
        expected[key] = (expected.get(key, "") + text) if action == "append" else text
        assert result["file"]["bytes"] == len(expected[key].encode())

    replayed = NotesStore()
    for entry_id, data in recorder.entries:
        replayed.commit(entry_id, NoteEntryData.model_validate(data))
    assert {note.path: note.text for note in replayed} == expected
    assert {note.path: note.text for note in recorder.store} == expected
    for note in replayed:
        assert note.byte_count == len(note.text.encode())
    snapshot = replayed.snapshot(T0)
    assert parse_note_snapshot(snapshot.dump()) == snapshot


def _lines_holding(text, query, limit):
    """The definition: every line, tested one by one."""
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if query in line:
            found.append({"line_number": number, "line": line})
            if len(found) >= limit:
                break
    return found


@given(
    text=st.text(alphabet="ab\nc", max_size=60),
    query=st.text(alphabet="ab\nc", max_size=3),
    limit=st.integers(min_value=1, max_value=5),
)
def test_matching_lines_finds_what_a_test_of_every_line_finds(text, query, limit):
    assert matching_lines(text, query, limit) == _lines_holding(text, query, limit)


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("", ""),
        ("a\n", ""),
        ("\n\n", "a"),
        ("aa\naa", "aa"),
        ("a\nb", "a\nb"),
        ("x needle\n\nneedle needle\nend", "needle"),
        ("trailing needle", "needle"),
    ],
)
def test_matching_lines_edges(text, query):
    for limit in (1, 2, 100):
        assert matching_lines(text, query, limit) == _lines_holding(text, query, limit)
