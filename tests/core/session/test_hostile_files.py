"""Session files built to break the reader: special files, huge lines, odd versions."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support.pi_oracle import PiOracle
from support.session_lines import HEADER
from support.session_lines import lines as _lines
from support.session_lines import user_entry as _user
from support.timebox import bounded

from ctxmodes.session import codec, reader
from ctxmodes.session.errors import SessionError
from ctxmodes.session.listing import find_most_recent_session, list_sessions_in
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.migrate import needs_migration, version_number
from ctxmodes.session.reader import read_session_file, scan_file, scan_lines
from ctxmodes.session.regular_file import NotARegularFileError
from ctxmodes.session.store import EntryTable

T = TypeVar("T")


def _within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result, failing (not hanging) if it takes longer than ``seconds``."""
    return bounded(call, seconds)


def _expect_error(call: Callable[[], object]) -> str:
    def attempt() -> str:
        with pytest.raises(SessionError) as caught:
            call()
        return str(caught.value)

    return _within(5, attempt)


# ------------------------------------------------------------------ special files


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


def test_reading_a_fifo_fails_at_once(fifo: Path) -> None:
    message = _expect_error(lambda: read_session_file(fifo))
    assert message == f"not a session file (it is a FIFO): {fifo}"
    with pytest.raises(NotARegularFileError, match="FIFO"):
        _within(5, lambda: scan_file(fifo))


def test_opening_a_fifo_for_appending_fails_at_once(fifo: Path) -> None:
    message = _expect_error(lambda: SessionManager.open(fifo))
    assert message.endswith(f"{fifo}: not a regular file")
    assert "\n" not in message


def test_a_directory_is_not_a_session(tmp_path: Path) -> None:
    message = _expect_error(lambda: SessionManager.open(tmp_path, read_only=True))
    assert message == f"not a session file (it is a directory): {tmp_path}"


def test_listing_skips_fifos_among_sessions(tmp_path: Path, fifo: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_bytes(_lines(HEADER, _user("u1", None)))
    infos = _within(5, lambda: list_sessions_in(tmp_path))
    assert [info.path for info in infos] == [real]
    assert _within(5, lambda: find_most_recent_session(tmp_path)) == real


# ------------------------------------------------------------------ huge lines


def test_a_line_spanning_many_reads_is_joined_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "x" * (4 << 20)
    path = tmp_path / "long.jsonl"
    path.write_bytes(_lines(HEADER, _user("u1", None, text), _user("u2", "u1")))
    # The anchor, measured in the same run so that the machine's load cancels out: the
    # same file in the reader's own reads, a few of them for the line.
    whole_reads = _fastest_scan(path)
    # Tiny reads stand in for a line of hundreds of megabytes: 8k reads of one line.
    monkeypatch.setattr(reader, "_CHUNK_SIZE", 512)
    tiny_reads = _fastest_scan(path)
    scan = _within(10, lambda: scan_file(path))
    assert scan.ids == ["u1", "u2"]
    # Too long for the region decoded during the scan: read back from its offsets.
    table = EntryTable.from_scan(scan, path)
    assert table.entry(0)["message"]["content"] == text
    table.close()
    # About 3 times the anchor when each piece is kept once; joining the pieces on every
    # read made it quadratic, hundreds of times the anchor.
    assert tiny_reads < 20 * whole_reads


def _fastest_scan(path: Path) -> float:
    """The fastest of three scans of ``path``, in seconds."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        _within(10, lambda: scan_file(path))
        times.append(time.perf_counter() - started)
    return min(times)


def test_an_unterminated_huge_line_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "_CHUNK_SIZE", 256)
    path = tmp_path / "torn.jsonl"
    path.write_bytes(
        _lines(HEADER, _user("u1", None)) + b'{"type":"message","x":"' + b"y" * 100_000
    )
    scan = _within(5, lambda: scan_file(path))
    assert scan.ids == ["u1"]
    assert [(s.line_number, s.reason) for s in scan.skipped] == [(3, reader.MALFORMED)]
    assert not scan.ends_with_newline


# ------------------------------------------------------------------ header versions


def test_a_version_beyond_the_double_range_is_current() -> None:
    header = b'{"type":"session","version":1' + b"0" * 400 + b',"id":"s1","cwd":"/p"}\n'
    scan = scan_lines(header + _lines(_user("u1", None)))
    assert scan.original_version == float("inf")
    assert scan.ids == ["u1"]


def test_a_huge_first_kept_index_in_a_version_1_file_is_ignored() -> None:
    compaction = (
        b'{"type":"compaction","timestamp":"t","summary":"s","tokensBefore":1,'
        b'"firstKeptEntryIndex":1' + b"0" * 400 + b"}\n"
    )
    header = dict(HEADER, version=1)
    scan = scan_lines(_lines(header, {"type": "message", "timestamp": "t"}) + compaction)
    assert len(scan.ids) == 2
    assert "firstKeptEntryIndex" not in scan.decoded[1]


# JavaScript compares ``header.version`` with numbers after ``Number()``: hex strings,
# single-element arrays and the like count, Python-only spellings do not.
ODD_VERSIONS: list[Any] = [
    [1],
    [[2]],
    [None],
    [],
    [1, 2],
    {},
    True,
    "0x1",
    "0b10",
    " 2.5 ",
    "-Infinity",
    "-inf",
    "1_0",
    "nan",
    "",
    "2e0",
    ".5",
    "1.",
    "0x",
]


def _legacy_session(version: Any) -> bytes:
    header = codec.dumps(dict(HEADER, version=version))
    hook = {
        "type": "message",
        "id": "b",
        "parentId": "a",
        "timestamp": "2025-01-01T00:00:02.000Z",
        "message": {"role": "hookMessage", "content": "h", "display": True, "timestamp": 2},
    }
    return _lines(header + b"\n", _user("a", None), hook)


def test_odd_header_versions_migrate_as_in_pi(tmp_path: Path, pi: PiOracle) -> None:
    files = []
    for number, version in enumerate(ODD_VERSIONS):
        path = tmp_path / f"v{number}.jsonl"
        # Pi rewrites migrated files in place; these copies are its to change.
        path.write_bytes(_legacy_session(version))
        files.append(path)
    answers = pi.open_many([{"file": str(path), "at": []} for path in files])
    for version, answer in zip(ODD_VERSIONS, answers, strict=True):
        pi_v1_step = answer["tree"]["roots"] != ["a"]
        pi_v2_step = answer["context"]["messages"][-1]["role"] == "custom"
        ours = needs_migration(version_number({"version": version}))
        assert ours == (pi_v1_step, pi_v2_step), f"version {json.dumps(version)}"


# ------------------------------------------------------------------ structural warnings


def test_thousands_of_duplicate_ids_make_one_warning() -> None:
    records = [_user("dup", None if i == 0 else "dup") for i in range(3000)]
    with SessionManager.in_memory("/p", entries=[HEADER, *records]) as manager:
        warnings = [str(warning) for warning in manager.warnings]
    duplicates = [warning for warning in warnings if "used" in warning]
    assert duplicates == [
        "entry id dup is used 3000 times; lookups find the last one (entry #3000 in file "
        "order), earlier ones are only reachable by position"
    ]


def test_a_long_parent_cycle_is_reported_in_one_short_line() -> None:
    count = 5000
    records = [_user(f"n{i}", f"n{(i - 1) % count}") for i in range(count)]
    with SessionManager.in_memory("/p", entries=[HEADER, *records]) as manager:
        (warning,) = [str(warning) for warning in manager.warnings]
        assert manager.get_branch_ids("n3") == ["n0", "n1", "n2", "n3"]
    assert f"({count} entries)" in warning
    assert len(warning) < 200


def test_reading_while_another_process_appends(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(_lines(HEADER, _user("u0", None)))
    # A torn last line, as seen mid-append, is reported and not taken as an entry.
    with path.open("ab") as stream:
        stream.write(codec.dumps_line(_user("u1", "u0"))[:-10])
    before = path.read_bytes()
    with SessionManager.open(path, read_only=True) as manager:
        assert manager.get_branch_ids() == ["u0"]
        assert [line.line_number for line in manager.skipped_lines] == [3]
    assert path.read_bytes() == before


def test_an_endless_device_is_not_read(tmp_path: Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this platform")
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    message = _expect_error(lambda: SessionManager.open(link, read_only=True))
    assert message == f"not a session file (it is a character device): {link}"


def _duplicate_id_cycle() -> bytes:
    # The last ``A`` is attached under ``B`` while ``A``'s node already holds ``C`` (through
    # the first ``C``) and ``C``'s node holds ``B``: A -> C -> B -> A among tree nodes,
    # although the entries' own links (resolved to the last entry of each id) have no cycle
    # the store would cut.
    return _lines(
        HEADER,
        _user("A", None),
        _user("C", "A"),
        _user("C", None),
        _user("B", "C"),
        _user("A", "B"),
    )


def test_duplicated_ids_tying_tree_nodes_into_a_cycle_still_make_a_forest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cycle.jsonl"
    path.write_bytes(_duplicate_id_cycle())
    with SessionManager.open(path, read_only=True) as manager:
        roots = _within(5, manager.get_tree)
    seen: list[str] = []
    stack = list(roots)
    while stack and len(seen) < 10:
        node = stack.pop()
        seen.append(node.entry_id)
        stack.extend(node.children)
    assert sorted(seen) == ["A", "B", "C"], "every node once, and the walk ends"


def test_a_last_line_still_being_written_is_in_progress_not_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "live.jsonl"
    path.write_bytes(_lines(HEADER, _user("u0", None)))
    line = codec.dumps_line(_user("u1", "u0"))
    with path.open("ab") as stream:
        stream.write(line[:-10])
    real_pread = os.pread

    def writer_finishes_during_the_read(fd: int, size: int, offset: int) -> bytes:
        """The file as read while its writer completes the line: after the reader saw the
        end of the file, the rest of the line arrives."""
        data = real_pread(fd, size, offset)
        if not data:
            with path.open("ab") as writer:
                writer.write(line[-10:])
        return data

    monkeypatch.setattr(os, "pread", writer_finishes_during_the_read)
    scan = reader.scan_file(path)
    assert scan.ids == ["u0"]
    assert scan.skipped == []
    assert scan.in_progress == len(line) - 10
    monkeypatch.undo()
    # Read again once the writer is done, the line is an entry.
    assert reader.scan_file(path).ids == ["u0", "u1"]
