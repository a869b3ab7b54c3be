from __future__ import annotations

import json
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
