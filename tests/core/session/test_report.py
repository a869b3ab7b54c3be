from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Final

import pytest
from support.pi_oracle import PiOracle

from ctxmodes import forked_work
from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report, write_context_report


def test_context_report_positions(oracle_cases: Path) -> None:
    with SessionManager.open(oracle_cases / "branch_simple.jsonl", read_only=True) as manager:
        leaf = context_report(manager)
        first = manager.get_branch_ids()[0]
        at_first = context_report(manager, first)
        empty = context_report(manager, "null")
        assert leaf["leafId"] == manager.get_leaf_id()
        assert at_first["branchIds"] == [first]
        assert empty == {
            "leafId": None,
            "branchIds": [],
            "contextEntryIds": [],
            "context": {"messages": [], "thinkingLevel": "off", "model": None},
        }
        assert context_report(manager) == leaf  # positions do not move the leaf


def test_a_session_opened_without_preloading_reports_the_same(oracle_cases: Path) -> None:
    # Nothing decoded ahead, nothing kept once read: the same answers, from the index alone.
    for case in ("compaction_with_labels_and_meta", "branch_simple", "linear_thinking_tools"):
        path = oracle_cases / f"{case}.jsonl"
        with SessionManager.open(path, read_only=True) as kept:
            want = [context_report(kept, entry_id) for entry_id in kept.get_branch_ids()]
            want.append(context_report(kept, llm=True))
        with SessionManager.open(path, read_only=True, preload=False) as bare:
            got = [context_report(bare, entry_id) for entry_id in bare.get_branch_ids()]
            got.append(context_report(bare, llm=True))
            assert bare.get_entry_json(bare.get_branch_ids()[-1]) is not bare.get_entry_json(
                bare.get_branch_ids()[-1]
            ), "an entry read again is decoded again, not kept"
        assert got == want


_HEADER: Final = (
    b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/"}'
)


def _message_entry(number: int, message: str, second: int = 0) -> bytes:
    """Message entry ``e<number>``, the child of the one numbered before it."""
    parent = "null" if number == 1 else f'"e{number - 1}"'
    return (
        f'{{"type":"message","id":"e{number}","parentId":{parent},'
        f'"timestamp":"2026-01-01T00:00:0{second}.000Z","message":{message}}}'
    ).encode()


def test_entries_read_back_in_runs_skip_exactly_what_the_scan_skipped(tmp_path: Path) -> None:
    # Context entries are decoded a run of lines at a time; skipped lines between them (and
    # lines only the lenient decoder reads) must neither shift nor stop the run.
    def entry(number: int, text: str) -> bytes:
        message = f'{{"role":"user","content":"{text}","timestamp":{number}}}'
        return _message_entry(number, message, second=number)

    deep = b'{"type":"custom","id":"deep","data":' + b"[" * 201 + b"]" * 201 + b"}"
    # JSON a run's single parse reads, and lines it cannot parse.
    parsed_between = [deep, b"[1]", b'{"type":"custom"}', b'{"type":"session","id":"again"}']
    unparsed_between = [b"{not json", b"", b"  ", entry(9, "lone \\ud800 half")[:-1]]
    for number, between in enumerate((parsed_between, unparsed_between)):
        lines = [_HEADER, entry(1, "one")]
        for position, line in enumerate(between, start=2):
            lines += [
                line,
                entry(position, "crlf") + b"\r" if position == 3 else entry(position, "x"),
            ]
        lines.append(entry(len(between) + 2, "lone \\ud800 half"))
        path = tmp_path / f"gaps{number}.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        with SessionManager.open(path, read_only=True) as preloaded:
            want = context_report(preloaded)
        assert want["contextEntryIds"] == [f"e{n}" for n in range(1, len(between) + 3)]
        with SessionManager.open(path, read_only=True, preload=False) as bare:
            assert context_report(bare) == want
            written: list[bytes] = []
            write_context_report(bare, written.append)
        assert b"".join(written) == codec.dumps(want) + b"\n"


def test_long_runs_of_messages_read_back_in_blocks_report_every_message(tmp_path: Path) -> None:
    # Over a thousand consecutive message entries (read back a long run at a time), then the
    # same with a gap and blocks that mix in a message without content (Pi gives it an empty
    # one) and a custom message: each block's messages taken whole or one by one alike.
    count = 1300
    plain = [
        _message_entry(n, f'{{"role":"user","content":"m{n}","timestamp":{n}}}')
        for n in range(1, count)
    ]
    mixed = list(plain)
    mixed[700] = _message_entry(701, '{"role":"assistant","content":null,"timestamp":701}')
    mixed[1100] = (
        b'{"type":"custom_message","id":"e1101","parentId":"e1100",'
        b'"timestamp":"2026-01-01T00:00:01.000Z","customType":"note","content":"c","display":true}'
    )
    mixed.insert(300, b'{"type":"label","id":"l","parentId":"e300","targetId":"e1","label":"x"}')
    for name, lines in (("plain", plain), ("mixed", mixed)):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(b"\n".join([_HEADER, *lines]) + b"\n")
        with SessionManager.open(path, read_only=True) as preloaded:
            want = context_report(preloaded)
        assert len(want["context"]["messages"]) == count - 1
        with SessionManager.open(path, read_only=True, preload=False) as bare:
            written: list[bytes] = []
            write_context_report(bare, written.append)
        assert b"".join(written) == codec.dumps(want) + b"\n"
    assert want["context"]["messages"][700]["content"] == []
    assert want["context"]["messages"][1100]["role"] == "custom"


def test_a_long_context_is_written_alike_in_turns_by_two_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: list[int]
) -> None:
    # Turns of messages encoded by a forked copy of the process and by the process itself
    # come out in order: the same bytes as one process writes, and as the report object.
    count = 5000
    lines = [
        _message_entry(n, f'{{"role":"user","content":"m{n}","timestamp":{n}.5}}')
        for n in range(1, count)
    ]
    lines[3333] = _message_entry(3334, '{"role":"assistant","content":null,"timestamp":1}')
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join([_HEADER, *lines]) + b"\n")
    with SessionManager.open(path, read_only=True, preload=False) as manager:
        in_turns: list[bytes] = []
        write_context_report(manager, in_turns.append)
        assert len(forked) == 1
        monkeypatch.setattr(forked_work, "can_fork", lambda: False)
        alone: list[bytes] = []
        write_context_report(manager, alone.append)
        want = context_report(manager)
    assert len(forked) == 1
    assert b"".join(in_turns) == b"".join(alone) == codec.dumps(want) + b"\n"
    assert len(want["context"]["messages"]) == count - 1


# Pi's report of a file, as JSON.stringify writes it (check_open.mjs's object at the leaf).
_PI_REPORT = """
import { pathToFileURL } from "node:url";
const [lib, file] = process.argv.slice(1);
const { importCore, resolvePi } = await import(pathToFileURL(lib).href);
const core = await importCore(resolvePi());
const manager = core.SessionManager.open(file);
const context = manager.buildSessionContext();
process.stdout.write(JSON.stringify({
    leafId: manager.getLeafId(),
    branchIds: manager.getBranch().map((entry) => entry.id),
    contextEntryIds: manager.buildContextEntries().map((entry) => entry.id),
    context: {
        messages: context.messages, thinkingLevel: context.thinkingLevel, model: context.model,
    },
}) + "\\n");
"""


@pytest.mark.pi
def test_the_report_is_pis_json_stringify_byte_for_byte(tmp_path: Path, pi: PiOracle) -> None:
    # Messages read back only to be written again, in blocks: numbers that orjson writes
    # otherwise than JSON.stringify, escapes, spaces and a duplicated key in the blocks of
    # the direct way; keys, integers and text that make the last block take the general way.
    direct = [
        b"[1.0, -0.0, 1e16, 1E5, 1.5e-7, 1e-6, 1e21, 1e400, 0.000123, 2.5, -9338248829634990.0]",
        b'"\\u00e9 \\/ \\u2028 \\u007f"',
        b'{"a": 1, "b": 2.0, "a": 3}',
    ]
    general = [
        b'{"7": 1, "a1": 2, "10": 3}',
        b"[9007199254740993, 18446744073709551616]",
        b'"a lone \\ud800 half"',
        b'"invalid \xff byte"',
    ]
    lines = [
        b'{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    ]
    # Long enough to be written in turns by two processes (the last turn takes the general way).
    for number in range(1, 2600):
        content = b'"text %d"' % number
        if number % 37 == 0:
            content = direct[number // 37 % len(direct)]
        if number > 2430 and number % 13 == 0:
            content = general[number // 13 % len(general)]
        parent = b"null" if number == 1 else b'"e%d"' % (number - 1)
        line = (
            b'{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z",'
            b'"message":{"role":"user","content":%s,"timestamp":%d, "usage": {"cost": %s}}}'
        ) % (number, parent, content, number, b"0.1" if number % 2 else b"3.0")
        lines.append(line)
    path = tmp_path / "odd_numbers.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with SessionManager.open(path, read_only=True, preload=False) as manager:
        written: list[bytes] = []
        write_context_report(manager, written.append)
    done = subprocess.run(
        [
            pi.node,
            "--input-type=module",
            "-e",
            _PI_REPORT,
            str(pi.oracle / "pi_oracle_lib.mjs"),
            str(path),
        ],
        capture_output=True,
        env=dict(os.environ, PI_NODE_MODULES=str(pi.node_modules)),
        check=True,
        timeout=120,
    )
    assert b"".join(written) == done.stdout
