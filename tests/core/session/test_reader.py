from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import PiOracle
from support.session_lines import HEADER
from support.session_lines import lines as _lines
from support.session_lines import user_entry as _user

from ctxmodes.session import codec, reader
from ctxmodes.session.context import build_session_context
from ctxmodes.session.errors import NotASessionError, SessionError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.reader import ScanResult, scan_file, scan_lines
from ctxmodes.session.store import EntryTable

Snapshot = Callable[[SessionManager, list[str | None]], dict[str, Any]]


def _write(tmp_path: Path, data: bytes, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_every_skipped_line_is_reported_with_number_and_reason(tmp_path: Path) -> None:
    data = _lines(
        b"\n",
        HEADER,
        b"   \n",
        _user("u1", None),
        b"{not json\n",
        b"[1,2]\n",
        b"0\n",
        {"type": "message", "parentId": "u1"},
        {"type": "session", "id": "again"},
        b'{"type":"message","id":"n","parentId":"u1","v":NaN}\n',
        _user("u2", "u1"),
        b'{"type":"message","id":"torn"',
    )
    path = _write(tmp_path, data)
    with SessionManager.open(path, read_only=True) as manager:
        reasons = [(line.line_number, line.reason) for line in manager.skipped_lines]
        assert manager.get_branch_ids() == ["u1", "u2"]
    assert reasons == [
        (1, "blank line"),
        (3, "blank line"),
        (5, "not valid JSON"),
        (6, "not a JSON object"),
        (7, "not a JSON object"),
        (8, "entry has no string id"),
        (9, "second session header"),
        (10, "not valid JSON"),
        (12, "not valid JSON"),
    ]
    assert path.read_bytes() == data


def test_excerpts_show_the_start_of_the_line() -> None:
    scan = scan_lines(_lines(HEADER, b"{" + b"x" * 500 + b"\n"))
    (skipped,) = scan.skipped
    assert skipped.excerpt.startswith("{xxx")
    assert len(skipped.excerpt) == 80
    assert str(skipped) == "line 2: not valid JSON"


def test_crlf_lines_load_like_lf_lines(tmp_path: Path) -> None:
    data = _lines(HEADER, _user("u1", None), _user("u2", "u1")).replace(b"\n", b"\r\n")
    with SessionManager.open(_write(tmp_path, data), read_only=True) as manager:
        assert manager.get_branch_ids() == ["u1", "u2"]
        assert manager.skipped_lines == ()
        assert manager.build_session_context().message_json[1]["content"] == "q"


def test_invalid_utf8_is_replaced_as_pi_decodes_it(tmp_path: Path) -> None:
    line = codec.dumps_line(_user("u1", None, "AB")).replace(b"AB", b"A\xffB")
    with SessionManager.open(_write(tmp_path, _lines(HEADER, line)), read_only=True) as manager:
        assert manager.build_session_context().message_json[0]["content"] == "A\ufffdB"


def test_lines_longer_than_the_read_chunk_are_indexed(tmp_path: Path) -> None:
    big = "x" * (3 * 1024 * 1024)
    data = _lines(HEADER, _user("u1", None), _user("u2", "u1", big), _user("u3", "u2"))
    with SessionManager.open(_write(tmp_path, data), read_only=True) as manager:
        assert manager.get_branch_ids() == ["u1", "u2", "u3"]
        assert manager.build_session_context().message_json[1]["content"] == big


def _compaction(entry_id: str, parent: str) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:09.000Z",
        "summary": "S",
        "firstKeptEntryId": parent,
        "tokensBefore": 1,
    }


def _literal_session(literal: bytes) -> bytes:
    """A session with lines holding ``literal`` in the validated region (one straddling a
    1 MiB read boundary) and in the region decoded in full, next to lines that only hold the
    word inside a string."""
    prefix = b'{"type":"message","id":"n","parentId":"u1","pad":"'
    head = codec.dumps_line(HEADER) + codec.dumps_line(_user("u1", None))
    pad = 1024 * 1024 - len(head) - len(prefix) - 2
    straddling = prefix + b"y" * pad + b'","v":' + literal + b"}\n"
    word = literal.decode()
    early_text = codec.dumps_line(_user("early", "u1", f"{word} in a string"))
    filler = b"".join(
        codec.dumps_line(_user(f"f{i}", "early" if i == 0 else f"f{i - 1}", "z" * 1000))
        for i in range(2000)
    )
    late = b'{"type":"message","id":"late","parentId":"c","v":[' + literal + b"]}\n"
    late_text = codec.dumps_line(_user("after", "c", f"[{word}]"))
    return (
        head
        + straddling
        + early_text
        + filler
        + codec.dumps_line(_compaction("c", "f1999"))
        + late
        + late_text
    )


LITERALS = [b"NaN", b"Infinity", b"-Infinity"]


@pytest.mark.parametrize("literal", LITERALS)
def test_json_literals_that_json_parse_rejects_are_skipped_everywhere(
    tmp_path: Path, literal: bytes
) -> None:
    # Lines well before the last compaction are only validated, later ones decoded in full;
    # both must reject what JSON.parse rejects, even across a 1 MiB read boundary.
    scan = scan_file(_write(tmp_path, _literal_session(literal)))
    assert "n" not in scan.ids
    assert "late" not in scan.ids
    assert {"early", "after"} <= set(scan.ids)
    assert 0 not in scan.decoded  # the early lines really were only validated
    assert [(line.line_number, line.reason) for line in scan.skipped] == [
        (3, "not valid JSON"),
        (2006, "not valid JSON"),
    ]


@pytest.mark.pi
def test_json_literals_are_skipped_as_pi_skips_them(
    tmp_path: Path, pi: PiOracle, session_snapshot: Snapshot
) -> None:
    requests: list[dict[str, Any]] = []
    ours: list[dict[str, Any]] = []
    for literal in LITERALS:
        path = _write(tmp_path, _literal_session(literal), f"{literal.decode()}.jsonl")
        positions: list[str | None] = [None, "u1", "early", "f1000", "c", "after"]
        with SessionManager.open(path, read_only=True) as manager:
            ours.append(session_snapshot(manager, positions))
        requests.append({"file": str(path), "at": positions})
    for answer, mine in zip(pi.open_many(requests), ours, strict=True):
        assert json.dumps(answer, sort_keys=True) == json.dumps(mine, sort_keys=True)


def _scan_summary(scan: ScanResult) -> tuple[Any, ...]:
    skipped = [(line.line_number, line.reason) for line in scan.skipped]
    ends = [scan.ends[index] for index in range(len(scan.ids))]
    return scan.ids, list(scan.parents), scan.types, scan.starts, ends, skipped


@pytest.fixture(params=["validation", "counting"])
def nesting_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Either guard against deep lines: validation under a lowered recursion limit (where
    the interpreter allows it), or counting every line's brackets (the fallback)."""
    if request.param == "counting":
        monkeypatch.setattr(reader, "_validate_within_nesting_limit", lambda lines, proven: None)
    return str(request.param)


def _nested_message(entry_id: str, levels: int) -> bytes:
    # ``levels`` counts every object and array of the line, the entry itself included.
    inner = levels - 3  # the entry, its message and the content list
    return b'{"type":"message","id":"%s","parentId":"u1","message":{"role":"user",' % (
        entry_id.encode()
    ) + b'"content":[%s"x"%s],"timestamp":1}}\n' % (b"[" * inner, b"]" * inner)


def test_validation_rejects_every_line_nested_too_deeply_and_restores_the_limit() -> None:
    limit = sys.getrecursionlimit()
    lines = [_nested_message("ok", 150), *reader._TOO_DEEP_PROBES, _nested_message("deep", 201)]
    heads = reader._validate_within_nesting_limit(lines, set())
    assert sys.getrecursionlimit() == limit
    alone = threading.active_count() == 1
    if sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11) and alone:
        assert heads is not None  # the free guard is in use where msgspec allows it
    if heads is not None:
        assert heads[0] is not None
        assert heads[1:] == [None] * (len(lines) - 1)


def test_validation_is_not_the_guard_while_other_threads_run() -> None:
    # The recursion limit is the whole process's: lowering it could fail another thread.
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert reader._validate_within_nesting_limit([_nested_message("ok", 5)], set()) is None
    finally:
        release.set()
        other.join()


def test_deep_messages_are_skipped_exactly_at_the_limit(tmp_path: Path, nesting_guard: str) -> None:
    # Lines a little under the limit may fail validation; the general path then keeps them.
    depths = [170, 185, 199, codec.MAX_NESTING, codec.MAX_NESTING + 1, 260]
    data = _lines(HEADER, _user("u1", None)) + b"".join(
        _nested_message(f"d{depth}", depth) for depth in depths
    )
    scan = scan_file(_write(tmp_path, data), preload=False)
    assert scan.ids == ["u1", "d170", "d185", "d199", f"d{codec.MAX_NESTING}"]
    assert [(s.line_number, s.reason) for s in scan.skipped] == [
        (7, reader.TOO_DEEP),
        (8, reader.TOO_DEEP),
    ]
    assert _scan_summary(scan) == _scan_summary(scan_lines(data))


def test_deeply_nested_lines_are_judged_alike_when_validated_and_decoded(
    tmp_path: Path, nesting_guard: str
) -> None:
    # One nesting limit whichever path reads a line: the validator and the decoder give up
    # at different depths of their own, the limit is below both.
    def nested(entry_id: str, depth: int) -> bytes:
        value = b"[" * depth + b"]" * depth
        return b'{"type":"message","id":"%s","parentId":"u1","v":%s}\n' % (entry_id.encode(), value)

    filler = [_user(f"f{i}", "u1" if i == 0 else f"f{i - 1}", "z" * 1000) for i in range(1000)]
    # The entry's own object is one level.
    deepest_allowed = codec.MAX_NESTING - 1
    data = _lines(
        HEADER,
        _user("u1", None),
        nested("shallow", deepest_allowed),
        nested("limit", deepest_allowed + 1),
        nested("deep", 1100),
        nested("deeper", 50_000),
        *filler,
        _compaction("c", "f999"),
    )
    scan = scan_file(_write(tmp_path, data))
    assert 0 not in scan.decoded  # the nested lines were in the validated region
    assert "shallow" in scan.ids
    assert [(s.line_number, s.reason) for s in scan.skipped] == [
        (line, f"nested deeper than {codec.MAX_NESTING} levels") for line in (4, 5, 6)
    ]
    assert _scan_summary(scan) == _scan_summary(scan_lines(data))


@pytest.mark.parametrize("shift", [-1, 0, 1, 150, 402, 403, 404])
def test_deep_lines_are_found_wherever_the_reads_split_them(
    tmp_path: Path, shift: int, nesting_guard: str
) -> None:
    # The nesting guard counts a whole read at once: a line it starts, ends or spans (a line
    # longer than a read) must be judged as the same line read whole.
    def nested(entry_id: str, depth: int, pad: int = 0) -> bytes:
        value = b"[" * depth + b"]" * depth
        return b'{"type":"custom","id":"%s","parentId":"u1","pad":"%s","v":%s}\n' % (
            entry_id.encode(),
            b"p" * pad,
            value,
        )

    head = _lines(HEADER, _user("u1", None))
    filler = b'{"type":"custom","id":"fill","parentId":"u1","pad":"%s"}\n'
    # Make the first deep line end ``shift`` bytes after the first read ends.
    deep = nested("deep", codec.MAX_NESTING)
    padding = reader._CHUNK_SIZE + shift - len(head) - len(deep) - len(filler % b"")
    data = head + filler % (b"f" * padding) + deep
    data += nested("limit", codec.MAX_NESTING - 1) + nested("deep-again", codec.MAX_NESTING)
    data += nested("long", codec.MAX_NESTING, pad=3 * reader._CHUNK_SIZE // 2)
    data += nested("long-limit", codec.MAX_NESTING - 1, pad=reader._CHUNK_SIZE)
    data += _lines(_user("after", "u1"))
    scan = scan_file(_write(tmp_path, data), preload=False)
    assert [entry for entry in scan.ids if entry != "fill"] == [
        "u1",
        "limit",
        "long-limit",
        "after",
    ]
    assert _scan_summary(scan) == _scan_summary(scan_lines(data))


def test_the_region_after_the_last_compaction_is_decoded_while_scanning(tmp_path: Path) -> None:
    lines = [HEADER, _user("u1", None)]
    for i in range(3000):
        lines.append(_user(f"e{i}", lines[-1]["id"], "w" * 500))
    lines.append(_compaction("c", lines[-1]["id"]))
    lines.append(_user("after", "c"))
    scan = scan_file(_write(tmp_path, _lines(*lines)))
    assert len(scan.ids) == 3003
    decoded = sorted(scan.decoded)
    # Everything from a margin before the compaction to the end, and nothing early.
    assert decoded[-1] == 3002
    assert 0 not in scan.decoded
    assert decoded == list(range(decoded[0], 3003))


def test_the_region_decoded_while_scanning_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a compaction (or with one long ago) only the end of the file is decoded: the
    memory a long session needs at start-up must not grow with its size."""
    monkeypatch.setattr(reader, "RECENT_BYTES", 64 * 1024)
    lines = [HEADER, _user("u1", None)]
    for i in range(1000):
        lines.append(_user(f"e{i}", lines[-1]["id"], "w" * 500))
    path = _write(tmp_path, _lines(*lines))
    scan = scan_file(path)
    assert len(scan.ids) == 1001
    decoded = sorted(scan.decoded)
    assert decoded == list(range(decoded[0], 1001))
    assert 64 < len(decoded) < 200
    # The context is still the whole branch, read back from the file when asked for.
    with SessionManager.open(path, read_only=True) as manager:
        context = manager.build_session_context()
        assert len(context.messages) == 1001
        assert context.message_json[0]["content"] == "q"
        assert [m["content"] for m in context.message_json][1:] == ["w" * 500] * 1000


def _bare_entries(odd_values: bool) -> list[dict[str, Any]]:
    """Message-bearing entries, most of which project to no message, as in Pi. With
    ``odd_values`` some ``message`` values are not objects (lines the scan's validator
    rejects, so the chunk takes the line-by-line path)."""
    entries: list[dict[str, Any]] = [
        {"type": "message", "id": "m1", "parentId": "u1", "timestamp": "t"},
        {"type": "message", "id": "m2", "parentId": "m1", "timestamp": "t", "message": None},
        {"type": "branch_summary", "id": "b1", "parentId": "m2", "timestamp": "t", "summary": ""},
    ]
    if odd_values:
        entries.append({"type": "message", "id": "m3", "parentId": "b1", "message": "text"})
        entries.append({"type": "message", "id": "m4", "parentId": "m3", "message": [1]})
    parent = entries[-1]["id"]
    entries += [
        {
            "type": "branch_summary",
            "id": "b2",
            "parentId": parent,
            "timestamp": "t",
            "summary": "s",
        },
        {"type": "custom_message", "id": "c1", "parentId": "b2", "timestamp": "t", "content": "c"},
        {"type": "message", "id": "m5", "parentId": "c1", "timestamp": "t", "message": {"role": 1}},
    ]
    return entries


@pytest.mark.parametrize("odd_values", [False, True])
@pytest.mark.parametrize("recent_bytes", [0, 1 << 30])
def test_entries_that_project_to_no_message_are_known_without_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, recent_bytes: int, odd_values: bool
) -> None:
    """The scan records which message-bearing entries give no message, whether it only
    validated their lines (``recent_bytes`` 0) or decoded them, so a context's length is
    known without decoding it; the lazy context is the one decoding everything gives."""
    monkeypatch.setattr(reader, "RECENT_BYTES", recent_bytes)
    entries = [_user("u1", None), *_bare_entries(odd_values)]
    path = _write(tmp_path, _lines(HEADER, *entries))
    scan = scan_file(path)
    assert sorted(scan.bare) == list(range(1, 6 if odd_values else 4))
    in_memory = build_session_context(entries)
    with SessionManager.open(path, read_only=True) as manager:
        context = manager.build_session_context()
        assert context.to_json() == in_memory.to_json()
        assert len(context.messages) == len(in_memory.messages) == 4
        assert [m.role for m in context.messages] == [m.role for m in in_memory.messages]


def test_file_without_final_newline(tmp_path: Path) -> None:
    data = _lines(HEADER, _user("u1", None)).rstrip(b"\n")
    scan = scan_file(_write(tmp_path, data))
    assert scan.ids == ["u1"]
    assert not scan.ends_with_newline


def test_header_only_and_empty_files(tmp_path: Path) -> None:
    with SessionManager.open(_write(tmp_path, _lines(HEADER), "h.jsonl"), read_only=True) as m:
        assert m.get_leaf_id() is None
        assert m.build_session_context().to_json() == {
            "messages": [],
            "thinkingLevel": "off",
            "model": None,
        }
    empty = _write(tmp_path, b"", "e.jsonl")
    with SessionManager.open(empty, read_only=True) as manager:
        assert manager.get_header_json()["version"] == 3
        assert manager.entry_count() == 0
    assert empty.read_bytes() == b""


@pytest.mark.parametrize(
    "data",
    [
        _lines(_user("u1", None)),
        _lines(b"[1]\n", HEADER),
        _lines({"type": "session", "id": 5}),
        b"\n\n  \n",
        b"{broken\n",
    ],
)
def test_files_that_are_not_sessions(tmp_path: Path, data: bytes) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(NotASessionError, match="not a valid pi session"):
        SessionManager.open(path, read_only=True)
    assert path.read_bytes() == data


def test_blank_or_malformed_lines_before_the_header_are_skipped(tmp_path: Path) -> None:
    data = _lines(b"\n", b"{oops\n", b"null\n", HEADER, _user("u1", None))
    with SessionManager.open(_write(tmp_path, data), read_only=True) as manager:
        assert manager.get_branch_ids() == ["u1"]
        assert [line.line_number for line in manager.skipped_lines] == [1, 2, 3]


def test_missing_files_and_directories_are_errors(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="no such session file"):
        SessionManager.open(tmp_path / "missing.jsonl", read_only=True)
    with pytest.raises(SessionError, match="directory"):
        SessionManager.open(tmp_path, read_only=True)


V1 = [
    {"type": "session", "id": "legacy", "timestamp": "2024-06-01T00:00:00.000Z", "cwd": "/p"},
    {
        "type": "message",
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "q1", "timestamp": 1},
    },
    {
        "type": "message",
        "timestamp": "2025-01-01T00:00:02.000Z",
        "message": {
            "role": "hookMessage",
            "customType": "h",
            "content": "x",
            "display": True,
            "timestamp": 2,
        },
    },
    {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:03.000Z",
        "summary": "S",
        "firstKeptEntryIndex": 2,
        "tokensBefore": 5,
    },
    {
        "type": "compaction",
        "timestamp": "2025-01-01T00:00:04.000Z",
        "summary": "T",
        "firstKeptEntryIndex": 5,
        "tokensBefore": 6,
    },
    {
        "type": "message",
        "timestamp": "2025-01-01T00:00:05.000Z",
        "message": {"role": "user", "content": "q2", "timestamp": 5},
    },
]


def test_version_1_files_are_migrated_in_memory_only(tmp_path: Path) -> None:
    data = _lines(*V1)
    path = _write(tmp_path, data)
    with SessionManager.open(path, read_only=True) as first:
        ids = first.get_branch_ids()
        header = first.get_header_json()
        entries = [first.get_entry_json(entry_id) for entry_id in ids]
    assert path.read_bytes() == data
    assert header == {**V1[0], "version": 3}
    assert len(ids) == 5
    assert all(len(entry_id) == 8 for entry_id in ids)
    assert [entry["parentId"] for entry in entries] == [None, *ids[:-1]]
    assert entries[1]["message"]["role"] == "custom"
    # firstKeptEntryIndex counts parsed lines with the header at 0.
    assert entries[2]["firstKeptEntryId"] == ids[1]
    assert "firstKeptEntryIndex" not in entries[2]
    # An index pointing at an entry that has no id yet leaves the field out, as in Pi.
    assert "firstKeptEntryId" not in entries[3]
    assert list(entries[0]) == ["type", "timestamp", "message", "id", "parentId"]
    with SessionManager.open(path, read_only=True) as again:
        assert again.get_branch_ids() == ids


def test_version_1_files_refuse_appends(tmp_path: Path) -> None:
    path = _write(tmp_path, _lines(*V1))
    with SessionManager.open(path) as manager, pytest.raises(SessionError, match="version 1"):
        manager.append_session_info("x")
    assert path.read_bytes() == _lines(*V1)


def test_version_2_files_rename_hook_messages_and_accept_appends(tmp_path: Path) -> None:
    hook = {
        "role": "hookMessage",
        "customType": "h",
        "content": "x",
        "display": True,
        "timestamp": 2,
    }
    data = _lines(
        {**HEADER, "version": 2},
        _user("u1", None),
        {
            "type": "message",
            "id": "h1",
            "parentId": "u1",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": hook,
        },
    )
    path = _write(tmp_path, data)
    with SessionManager.open(path) as manager:
        assert manager.get_header_json()["version"] == 3
        assert manager.build_session_context().message_json[1]["role"] == "custom"
        manager.append_session_info("named")
    assert path.read_bytes().startswith(data)
    with SessionManager.open(path, read_only=True) as reopened:
        assert reopened.get_session_name() == "named"


def test_duplicate_ids_resolve_to_the_last_entry_and_are_reported(oracle_cases: Path) -> None:
    with SessionManager.open(oracle_cases / "foreign_duplicate_ids.jsonl", read_only=True) as m:
        assert m.get_branch_ids() == ["u1", "dup", "u2", "u3"]
        assert m.build_session_context().message_json[1]["content"][0]["text"] == (
            "second dup (sibling)"
        )
        (warning,) = m.warnings
        assert "dup" in str(warning)


def test_parent_cycles_never_hang_and_are_reported(tmp_path: Path) -> None:
    data = _lines(
        HEADER,
        _user("a", "c"),
        _user("b", "a"),
        _user("c", "b"),
        _user("self", "self"),
        _user("leaf", "b"),
    )
    path = _write(tmp_path, data)
    seen: dict[str, Any] = {}

    def inspect() -> None:
        with SessionManager.open(path, read_only=True) as manager:
            seen["branch"] = manager.get_branch_ids()
            seen["messages"] = len(manager.build_session_context().message_json)
            seen["self"] = manager.get_branch_ids("self")
            seen["warnings"] = sorted(str(warning) for warning in manager.warnings)
            seen["roots"] = [node.entry_id for node in manager.get_tree()]

    # Pi loops forever on such files; a hang here would fail instead of blocking the suite.
    worker = threading.Thread(target=inspect, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "opening a session with a parent cycle hung"
    assert seen["branch"] == ["a", "b", "leaf"]
    assert seen["messages"] == 3
    assert seen["self"] == ["self"]
    assert len(seen["warnings"]) == 2
    assert all("cycle" in warning for warning in seen["warnings"])
    assert seen["roots"] == ["a", "self"]


def test_scan_reports_json_not_objects_only_after_the_header() -> None:
    scan = scan_lines(_lines(HEADER, b'"text"\n', b"true\n", _user("u1", None)))
    assert [line.reason for line in scan.skipped] == ["not a JSON object"] * 2
    assert scan.ids == ["u1"]


def test_labels_and_session_names_are_indexed_while_scanning(tmp_path: Path) -> None:
    label = {
        "type": "label",
        "id": "l1",
        "parentId": "u1",
        "timestamp": "T",
        "targetId": "u1",
        "label": "first",
    }
    info = {
        "type": "session_info",
        "id": "i1",
        "parentId": "l1",
        "timestamp": "T",
        "name": "  my session \u00a0",
    }
    data = _lines(HEADER, _user("u1", None), label, info)
    with SessionManager.open(_write(tmp_path, data), read_only=True) as manager:
        assert manager.get_label("u1") == "first"
        assert manager.get_session_name() == "my session"
    assert json.loads(codec.dumps(label)) == label


def test_the_known_entry_types_are_shared_strings(tmp_path: Path) -> None:
    # One string object per type however long the file: a million entries would otherwise
    # hold a million copies of "message", and counting types is then an identity test.
    entries = [_user(f"u{n}", f"u{n - 1}" if n else None) for n in range(50)]
    odd = {"type": {"not": "hashable"}, "id": "odd", "parentId": "u49"}
    scan = scan_file(_write(tmp_path, _lines(HEADER, *entries, odd)))
    assert len({id(entry_type) for entry_type in scan.types[:50]}) == 1
    # A type that is not a string equals no entry type (in Pi neither): the index holds None,
    # which every lookup by type can hash.
    assert scan.types[50] is None


@pytest.mark.parametrize(
    ("ids", "duplicated"),
    [
        ([], False),
        (["a"], False),
        (["a", "b", "c", "d", "e"], False),
        (["a", "a", "c", "d", "e"], True),  # within the first half
        (["a", "b", "c", "e", "e"], True),  # within the second half
        (["a", "b", "c", "d", "b"], True),  # across the halves
        (["a", "a"], True),
    ],
)
def test_duplicated_ids_are_found_wherever_they_stand(ids: list[str], duplicated: bool) -> None:
    assert reader.has_duplicates(ids) is duplicated


@pytest.mark.parametrize("duplicated", [False, True])
def test_parents_that_are_not_the_line_before_resolve_to_the_last_entry_of_their_id(
    tmp_path: Path, duplicated: bool
) -> None:
    # Parents a few lines back, far back, later in the file, missing, the entry itself, and
    # (with a duplicated id) an id two entries hold: each found as Pi's map of ids has it.
    records: list[dict[str, Any]] = [_user("e0", None)]
    records += [_user(f"e{number}", f"e{number - 1}") for number in range(1, 1500)]
    odd_parents = {
        1500: "e1490",
        1501: "e3",
        1502: "later",
        1503: "missing",
        1504: "e1504",
        1505: "",
        1506: "e1499",
    }
    records += [_user(f"e{number}", parent) for number, parent in odd_parents.items()]
    records.append(_user("later", "e1506"))
    if duplicated:
        records.append(_user("e3", None))
    path = tmp_path / "parents.jsonl"
    path.write_bytes(_lines(HEADER, *records))
    table = EntryTable.from_scan(scan_file(path), path)
    last = {record["id"]: index for index, record in enumerate(records)}
    assert table.duplicated is duplicated
    stored = [record["parentId"] for record in records]
    assert list(table.parent_ids) == stored
    assert [table.parent_ids[index] for index in range(len(records))] == stored
    for index, record in enumerate(records):
        parent = record["parentId"]
        want = last.get(parent, -1) if parent and index not in table.cut_roots else -1
        assert table.parents[index] == want, record


@pytest.mark.parametrize("preload", [False, True])
def test_each_entry_ends_where_its_line_does(tmp_path: Path, preload: bool) -> None:
    # Kept only where the next entry's start does not tell: before skipped lines, at the ends
    # of the runs read together, around a line longer than a read, at the end of the file.
    lines = [codec.dumps(HEADER)]
    for number in range(3000):
        parent = f"u{number - 1}" if number else None
        line = codec.dumps(_user(f"u{number}", parent, "x" * (number % 7) * 40))
        lines.append(line + b"\r" if number == 99 else line)
        if number % 400 == 7:
            lines.append(b"")
        if number % 500 == 9:
            lines.append(b"{not json")
        if number == 1234:
            lines.append(codec.dumps(_user("big", f"u{number}", "y" * (300 * 1024))))
    data = b"\n".join(lines) + b"\n"
    path = _write(tmp_path, data)
    scan = scan_file(path, preload=preload)
    ends_in_file = []
    offset = 0
    for line in lines:
        if line.startswith(b'{"type":"message"'):
            ends_in_file.append(offset + len(line))
        offset += len(line) + 1
    assert len(scan.ids) == len(ends_in_file) == 3001
    assert [scan.ends[index] for index in range(len(scan.ids))] == ends_in_file
    with SessionManager.open(path, read_only=True, preload=preload) as manager:
        assert manager.get_entry_json("u99")["id"] == "u99"
        assert manager.get_entry_json("big")["id"] == "big"
