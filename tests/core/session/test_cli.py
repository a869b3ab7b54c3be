from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_show_draws_the_tree(capsys: pytest.CaptureFixture[str], oracle_cases: Path) -> None:
    code, out, err = run(capsys, "session", "show", str(oracle_cases / "labels.jsonl"))
    assert code == 0
    assert err == ""
    assert "◀ leaf" in out
    assert "label" in out
    assert "●" in out


def test_context_json_is_the_oracle_report(
    capsys: pytest.CaptureFixture[str], oracle_cases: Path, expected: Callable[[str, str], Any]
) -> None:
    name = "compaction_with_labels_and_meta"
    want = expected(name, "expected")
    code, out, _ = run(capsys, "session", "context", str(oracle_cases / f"{name}.jsonl"), "--json")
    assert code == 0
    report = json.loads(out)
    assert report == {
        key: want[key] for key in ("leafId", "branchIds", "contextEntryIds", "context")
    }
    position = next(iter(want["positions"]))
    code, out, _ = run(
        capsys,
        "session",
        "context",
        str(oracle_cases / f"{name}.jsonl"),
        "--at",
        position,
        "--json",
        "--llm",
    )
    report = json.loads(out)
    assert report["context"] == want["positions"][position]["context"]
    assert report["llm"] == expected(name, "llm")["positions"][position]
    code, out, _ = run(
        capsys, "session", "context", str(oracle_cases / f"{name}.jsonl"), "--at", "null", "--json"
    )
    assert json.loads(out)["branchIds"] == []


def test_context_text_output(capsys: pytest.CaptureFixture[str], oracle_cases: Path) -> None:
    code, out, _ = run(
        capsys, "session", "context", str(oracle_cases / "linear_thinking_tools.jsonl")
    )
    assert code == 0
    assert "── assistant" in out
    assert "→ read(" in out
    assert "(thinking)" in out
    code, out, _ = run(
        capsys, "session", "context", str(oracle_cases / "compaction_single.jsonl"), "--llm"
    )
    assert "<summary>" in out


def test_skipped_lines_are_warnings_or_strict_errors(
    capsys: pytest.CaptureFixture[str], oracle_cases: Path
) -> None:
    path = str(oracle_cases / "foreign_malformed_lines.jsonl")
    code, _, err = run(capsys, "session", "show", path)
    assert code == 0
    assert "line 5: not valid JSON (skipped)" in err
    code, _, err = run(capsys, "session", "context", path, "--strict")
    assert code == 1
    assert err.count("\n") == 1
    assert "line 2: blank line (and 3 more)" in err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["session", "show", "{missing}"], "no such session file"),
        (["session", "show", "{dir}"], "directory"),
        (["session", "context", "{no_header}"], "not a valid pi session"),
        (["session", "context", "{good}", "--at", "nope"], "Entry nope not found"),
        (["session", "show", "{binary}"], "not a valid pi session"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_1(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    oracle_cases: Path,
    arguments: list[str],
    message: str,
) -> None:
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\x01\x02\xff")
    values = {
        "missing": str(tmp_path / "missing.jsonl"),
        "dir": str(tmp_path),
        "no_header": str(oracle_cases / "foreign_no_header.jsonl"),
        "good": str(oracle_cases / "linear_basic.jsonl"),
        "binary": str(tmp_path / "binary.jsonl"),
    }
    code, out, err = run(capsys, *(argument.format(**values) for argument in arguments))
    assert code == 1
    assert out == ""
    assert err.startswith("ctxmodes: error: ")
    assert err.count("\n") == 1
    assert message in err


def test_the_installed_command_runs(oracle_cases: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxmodes",
            "session",
            "context",
            str(oracle_cases / "linear_basic.jsonl"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["leafId"]


def _message_line(entry_id: str, parent: str | None, content: Any) -> bytes:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": content, "timestamp": 1},
    }
    return json.dumps(entry).encode() + b"\n"


_HEADER = (
    b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
)


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


# entry > message > content > block > 196 arrays: 200 levels, the deepest line the store reads.
DEEPEST_MESSAGE = _message_line("a", None, [{"type": "text", "text": "t", "n": _nested(196)}])
TYPE_LIST = _message_line("a", None, "hi") + _message_line("b", "a", "there").replace(
    b'"type": "message"', b'"type": ["message"]'
)
LONE_SURROGATE = _message_line("a", None, "half \\ud800 a pair").replace(b"\\\\", b"\\")


@pytest.mark.pi
@pytest.mark.parametrize(
    "entries",
    [DEEPEST_MESSAGE, TYPE_LIST, LONE_SURROGATE],
    ids=["deepest-message", "type-list", "lone-surrogate"],
)
def test_context_json_of_odd_entries_is_pis(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pi: Any, entries: bytes
) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(_HEADER + entries)
    code, out, err = run(capsys, "session", "context", str(path), "--json", "--llm")
    assert (code, err) == (0, "")
    want = pi.open_many([{"file": str(path), "at": []}])[0]
    report = json.loads(out)
    keys = ("leafId", "branchIds", "contextEntryIds", "context", "llm")
    assert report == {key: want[key] for key in keys}
    code, out, err = run(capsys, "session", "context", str(path))
    assert (code, err) == (0, "")
    assert f"{len(want['context']['messages'])} messages" in out


@pytest.mark.slow  # runs ctxmodes in a process of its own
def test_a_lone_surrogate_prints_as_a_replacement_character(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(_HEADER + LONE_SURROGATE)
    for command in (["context"], ["context", "--llm"], ["show"], ["show", "--full"]):
        done = subprocess.run(
            [sys.executable, "-m", "ctxmodes", "session", *command, str(path)],
            capture_output=True,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
            check=False,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (0, b""), command
        if command[0] == "context":
            assert "half \ufffd a pair".encode() in done.stdout
