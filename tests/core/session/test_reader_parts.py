"""Reading a session file in parts, side by side in forked processes: the index is the one
reading it in order gives, whatever the file holds and wherever the parts meet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import SeedSessions, bounded, fuzz_settings, mutated_session, seed_sessions
from support.long_sessions import write_chain
from support.session_lines import HEADER
from support.session_lines import lines as _lines
from support.session_lines import user_entry as _user

from ctxmodes import forked_work
from ctxmodes.session import codec, reader
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.reader import ScanResult, scan_file, shared_type
from ctxmodes.session.report import context_report

PART_COUNTS = [2, 3, 5]


def _summary(scan: ScanResult) -> dict[str, Any]:
    """Everything a scan found. Parent indexes count only without duplicated ids: with
    them the index resolves every link again by id (as Pi does). Which entries were
    decoded on the way may differ (validation, which tells lines nested nearly too deeply
    to the full decoder, is the nesting guard only in a process with a single thread); what
    was decoded is checked against the file."""
    _assert_decoded_as_stored(scan)
    return {
        "header": scan.header,
        "version": (scan.original_version, scan.rename_hook_messages),
        "ids": scan.ids,
        "parents": list(scan.parents),
        "parent_indexes": None if scan.duplicated else list(scan.parent_indexes),
        "duplicated": scan.duplicated,
        "types": scan.types,
        "starts": list(scan.starts),
        "ends": [scan.ends[index] for index in range(len(scan.ids))],
        "skipped": [(line.line_number, line.reason, line.head) for line in scan.skipped],
        "bare": sorted(scan.bare),
        "labels": scan.label_indexes,
        "session_info": scan.last_session_info,
        "file": (scan.size, scan.in_progress, scan.ends_with_newline, scan.not_a_session),
    }


def _assert_decoded_as_stored(scan: ScanResult) -> None:
    for index, entry in scan.decoded.items():
        if scan.starts[index] >= 0:
            assert scan.ids[index] == entry["id"]
            assert scan.types[index] == shared_type(entry.get("type"))


def _in_order(path: Path, preload: bool) -> dict[str, Any]:
    return _summary(scan_file(path, preload=preload))


def _in_parts(
    path: Path, count: int, preload: bool, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    with monkeypatch.context() as patch:
        patch.setattr(reader, "_part_count", lambda size: count)
        return _summary(scan_file(path, preload=preload))


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory, oracle_cases: Path) -> SeedSessions:
    return SeedSessions(seed_sessions(tmp_path_factory.mktemp("seeds"), oracle_cases))


def _varied_session() -> bytes:
    """Entries of every kind the scan treats apart, in short runs, so that parts meet at
    each of them: side branches, roots, labels, session names, branch summaries (empty
    ones too), messages without a message, skipped lines of each reason, duplicated ids."""
    entries: list[Any] = []
    previous: str | None = None
    for n in range(240):
        entry_id = f"e{n}"
        kind = n % 12
        if kind == 1:
            entries.append(
                {
                    "type": "label",
                    "id": entry_id,
                    "parentId": previous,
                    "targetId": "e0",
                    "label": f"mark {n}",
                }
            )
        elif kind == 2:
            entries.append(
                {"type": "session_info", "id": entry_id, "parentId": previous, "name": f"name {n}"}
            )
        elif kind == 3:
            entries.append(
                {
                    "type": "branch_summary",
                    "id": entry_id,
                    "parentId": previous,
                    "fromId": "e0",
                    "summary": "" if n % 24 == 3 else f"gist {n}",
                }
            )
        elif kind == 4:
            entries.append({"type": "message", "id": entry_id, "parentId": previous})
        elif kind == 5:
            entries.append(_user(entry_id, f"e{n - 4}"))  # a side branch
        elif kind == 6:
            entries.append(_user(entry_id, None))  # a root
        elif kind == 7:
            entries.append(b"")
            entries.append(b"{not json")
            entries.append(b"[1, 2]")
            entries.append(_user(entry_id, previous))
        elif kind == 8 and n % 48 == 8:
            entries.append(_user("e0", previous))  # a duplicated id, now and then
        else:
            entries.append(_user(entry_id, previous))
        previous = entry_id
    return _lines(HEADER, *entries)


@pytest.mark.parametrize("count", PART_COUNTS)
@pytest.mark.parametrize("preload", [False, True])
def test_parts_index_a_varied_session_as_reading_it_in_order_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, preload: bool
) -> None:
    path = tmp_path / "varied.jsonl"
    path.write_bytes(_varied_session())
    # Decoded in full from the middle on, so that parts also meet inside that region.
    monkeypatch.setattr(reader, "RECENT_BYTES", path.stat().st_size // 2)
    assert _in_parts(path, count, preload, monkeypatch) == _in_order(path, preload)
    in_order = scan_file(path, preload=preload).decoded
    with monkeypatch.context() as patch:
        patch.setattr(reader, "_part_count", lambda size: count)
        assert scan_file(path, preload=preload).decoded == in_order


@pytest.mark.slow  # the whole corpus, read in every number of parts
@pytest.mark.parametrize("count", PART_COUNTS)
def test_parts_index_every_oracle_case_as_reading_it_in_order_does(
    oracle_cases: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    cases = sorted(oracle_cases.glob("*.jsonl"))
    assert cases
    for path in cases:
        for preload in (False, True):
            in_parts = _in_parts(path, count, preload, monkeypatch)
            assert in_parts == _in_order(path, preload), path.name


def test_a_session_read_in_parts_gives_the_same_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "long.jsonl"
    write_chain(path, 3_000, compact_every=700)
    monkeypatch.setattr(reader, "_part_count", lambda size: 1)
    with SessionManager.open(path, read_only=True) as manager:
        expected = context_report(manager, None, llm=False)
    monkeypatch.setattr(reader, "_part_count", lambda size: 3)
    with SessionManager.open(path, read_only=True) as manager:
        assert context_report(manager, None, llm=False) == expected


@pytest.mark.slow
@fuzz_settings(max_examples=60)
@given(data=st.data(), count=st.sampled_from(PART_COUNTS), preload=st.booleans())
def test_mutated_sessions_read_in_parts_index_as_in_order(
    seeds: SeedSessions, monkeypatch: pytest.MonkeyPatch, data: Any, count: int, preload: bool
) -> None:
    content = data.draw(mutated_session(seeds.lines))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "fuzzed.jsonl"
        path.write_bytes(content)
        expected = bounded(lambda: _in_order(path, preload))
        assert bounded(lambda: _in_parts(path, count, preload, monkeypatch)) == expected


@pytest.mark.parametrize(
    "twice",
    [(None, None), (0.1, 0.2), (0.1, 0.95), (0.9, 0.95), (0.1, 0.5), (0.4, 0.6), (0.6, 0.62)],
)
def test_an_id_used_twice_is_found_whichever_parts_hold_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twice: tuple[float | None, float | None]
) -> None:
    count = 600
    ids = [f"u{n}" for n in range(count)]
    first, second = twice
    if first is not None and second is not None:
        ids[int(second * count)] = ids[int(first * count)]
    path = tmp_path / "twice.jsonl"
    path.write_bytes(
        _lines(HEADER, *[_user(ids[n], ids[n - 1] if n else None) for n in range(count)])
    )
    for parts in (2, 3, 4):
        in_parts = _in_parts(path, parts, False, monkeypatch)
        assert in_parts["duplicated"] is (first is not None)
        assert in_parts == _in_order(path, preload=False)


def test_entries_msgpack_cannot_carry_are_read_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Labels are decoded on the way; a lone surrogate (which Pi writes) or a very large
    # integer in one cannot be handed back as msgpack, and the part fails.
    odd = [
        b'{"type":"label","id":"l1","parentId":"u3","targetId":"u1","label":"half \\ud800"}\n',
        b'{"type":"label","id":"l2","parentId":"l1","targetId":"u2","n":123456789012345678901234}\n',
    ]
    entries = [_user(f"u{n}", f"u{n - 1}" if n else None) for n in range(4)]
    later = [_user(f"v{n}", f"v{n - 1}" if n else "l2") for n in range(400)]
    path = tmp_path / "odd.jsonl"
    path.write_bytes(_lines(HEADER, *entries, *odd, *later))
    expected = _in_order(path, preload=False)
    assert expected["labels"] == [4, 5]
    assert _in_parts(path, 2, False, monkeypatch) == expected


def test_a_part_that_fails_is_read_here_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_varied_session())
    expected = _in_order(path, preload=False)

    def fail(scanner: Any) -> bytes:
        raise MemoryError("the child ran out of memory")

    monkeypatch.setattr(reader, "_part_answer", fail)
    assert _in_parts(path, 3, False, monkeypatch) == expected


def test_a_file_whose_first_part_holds_no_header_is_read_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pi takes the first line that parses as the header, wherever it is.
    path = tmp_path / "late.jsonl"
    path.write_bytes(
        b"{broken\n" * 2_000 + _lines(HEADER, *[_user(f"u{n}", None) for n in range(9)])
    )
    in_parts = _in_parts(path, 2, False, monkeypatch)
    assert in_parts == _in_order(path, preload=False)
    assert in_parts["header"] == HEADER
    assert len(in_parts["skipped"]) == 2_000


def test_a_line_still_being_written_is_left_out_as_when_reading_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "growing.jsonl"
    path.write_bytes(
        _lines(HEADER, *[_user(f"u{n}", f"u{n - 1}" if n else None) for n in range(200)])
    )
    with path.open("ab") as stream:
        stream.write(b'{"type":"message","id":"half')
    assert _in_parts(path, 2, False, monkeypatch) == _in_order(path, preload=False)


def test_reading_in_parts_needs_a_large_file_more_cores_and_no_other_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(forked_work, "can_fork", lambda: True)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    least = reader.PART_LEAST
    assert reader._part_count(2 * least - 1) == 1
    assert reader._part_count(2 * least) == 2
    assert reader._part_count(3 * least) == 3
    assert reader._part_count(100 * least) == 4  # one part per core
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert reader._part_count(100 * least) == 1
    monkeypatch.setattr(forked_work, "can_fork", lambda: False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert reader._part_count(100 * least) == 1


@pytest.mark.parametrize(
    ("setting", "count"), [("1", 1), ("2", 2), ("64", 4), ("0", 1), ("many", 1)]
)
def test_the_environment_bounds_the_processes_reading_a_file(
    monkeypatch: pytest.MonkeyPatch, setting: str, count: int
) -> None:
    monkeypatch.setattr(forked_work, "can_fork", lambda: True)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setenv("CTXMODES_READ_PROCESSES", setting)
    assert reader._part_count(100 * reader.PART_LEAST) == count


def test_the_command_reads_a_large_session_in_parts_and_prints_the_same_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole command, in a process of its own (a single thread: it forks), on a file
    large enough to be read in parts on a machine with more than one core."""
    path = tmp_path / "large.jsonl"
    write_chain(path, 30_000, compact_every=7_000)
    assert path.stat().st_size >= 2 * reader.PART_LEAST
    command = [sys.executable, "-m", "ctxmodes", "session", "context", str(path), "--json"]
    printed = subprocess.run(command, capture_output=True, check=True).stdout
    monkeypatch.setattr(reader, "_part_count", lambda size: 1)
    with SessionManager.open(path, read_only=True) as manager:
        expected = codec.dumps(context_report(manager, None, llm=False)) + b"\n"
    assert printed == expected


@pytest.mark.pi
def test_a_large_session_read_in_parts_has_the_context_pi_gives(tmp_path: Path, pi: Any) -> None:
    path = tmp_path / "large.jsonl"
    write_chain(path, 30_000, compact_every=7_000)
    command = [sys.executable, "-m", "ctxmodes", "session", "context", str(path), "--json"]
    report = json.loads(subprocess.run(command, capture_output=True, check=True).stdout)
    want = pi.open_many([{"file": str(path), "at": []}])[0]
    keys = ("leafId", "branchIds", "contextEntryIds", "context")
    assert report == {key: want[key] for key in keys}
