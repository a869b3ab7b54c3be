"""Offline commands on paths and arguments that are not what they should be."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.cli_process import CTXMODES, ctxmodes_environment

from ctxmodes.cli import main

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/p"}
USER = {
    "type": "message",
    "id": "u1",
    "parentId": None,
    "timestamp": "t",
    "message": {"role": "user", "content": "q", "timestamp": 1},
}


def _exit_code(argv: list[str]) -> int:
    """``main(argv)``, failing instead of hanging when it blocks."""
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), f"ctxmodes {' '.join(argv)} hung"
    return codes[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["session", "show"],
        ["session", "context"],
        ["history", "{}", "list_windows", "--mode", "local"],
    ],
)
def test_a_fifo_is_refused_in_one_line(
    argv: list[str], fifo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = [str(fifo) if part == "{}" else part for part in argv]
    if "{}" not in argv:
        full.append(str(fifo))
    assert _exit_code(full) == 1
    err = capsys.readouterr().err
    assert err == f"ctxmodes: error: not a session file (it is a FIFO): {fifo}\n"


def test_context_at_an_unknown_id_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(USER) + "\n")
    assert _exit_code(["session", "context", str(path), "--at", "nope"]) == 1
    assert capsys.readouterr().err == "ctxmodes: error: Entry nope not found\n"


def test_a_huge_header_version_is_read_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    header = json.dumps(HEADER).replace('"version": 3', '"version": 1' + "0" * 400)
    path.write_text(header + "\n" + json.dumps(USER) + "\n")
    assert _exit_code(["session", "context", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["leafId"] == "u1"


def _with_bad_line(path: Path) -> Path:
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(USER) + "\n\x00{oops\n")
    return path


def test_history_reports_the_lines_it_skips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _with_bad_line(tmp_path / "s.jsonl")
    assert _exit_code(["history", str(path), "list_windows", "--mode", "local"]) == 0
    err = capsys.readouterr().err
    assert err == f"ctxmodes: warning: {path}: line 3: not valid JSON (skipped)\n"


def test_run_reports_the_lines_it_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "fine"}]}))
    path = _with_bad_line(tmp_path / "s.jsonl")
    argv = ["run", "--session", str(path), "--cwd", str(tmp_path)]
    argv += ["--model", f"scripted:{script}", "hello"]
    assert _exit_code(argv) == 0
    err = capsys.readouterr().err
    assert f"ctxmodes: warning: {path}: line 3: not valid JSON (skipped)\n" in err


def test_a_deeply_nested_argument_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(USER) + "\n")
    deep = "[" * 100_000 + "]" * 100_000
    argv = ["history", str(path), "list_items", f"limit={deep}", "--mode", "local"]
    # Too deep to be JSON, so it stays text, which a limit does not take: one short line.
    assert _exit_code(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("ctxmodes: error: argument limit=[[[[")
    assert len(err) < 200


def test_session_show_on_duplicated_ids_that_form_a_cycle_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cycle.jsonl"
    records = [HEADER]
    for entry_id, parent in [("A", None), ("C", "A"), ("C", None), ("B", "C"), ("A", "B")]:
        records.append({**USER, "id": entry_id, "parentId": parent})
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert _exit_code(["session", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert all(out.count(f"{entry_id} user") == 1 for entry_id in "ABC")


def _deep_session(path: Path, depth: int) -> Path:
    """A session whose second entry holds a value nested ``depth`` levels deep."""
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    nested = {**USER, "id": "d", "parentId": "u1", "message": {**USER["message"], "x": value}}
    path.write_text("".join(json.dumps(record) + "\n" for record in (HEADER, USER, nested)))
    return path


@pytest.mark.parametrize("depth", [252, 600])
def test_context_json_on_a_deeply_nested_line_reports_it_instead_of_failing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    path = _deep_session(tmp_path / "deep.jsonl", depth)
    assert _exit_code(["session", "context", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["branchIds"] == ["u1"]
    assert captured.err == (
        f"ctxmodes: warning: {path}: line 3: nested deeper than 200 levels (skipped)\n"
    )


def test_run_traces_every_request_of_a_session_with_a_deeply_nested_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "fine"}]}))
    path = _deep_session(tmp_path / "deep.jsonl", 252)
    trace = tmp_path / "trace.jsonl"
    argv = ["run", "--session", str(path), "--cwd", str(tmp_path), "--trace", str(trace)]
    argv += ["--model", f"scripted:{script}"]
    assert _exit_code([*argv, "hello"]) == 0
    (request,) = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [m["role"] for m in request["messages"]] == ["user", "user"]
    assert "nested deeper than 200 levels (skipped)" in capsys.readouterr().err


def test_thousands_of_corrupt_lines_give_a_few_warnings_and_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "corrupt.jsonl"
    corrupt = "".join(f'{{"type":"message","id":"c{n}",\x01\n' for n in range(5_000))
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(USER) + "\n" + corrupt)
    assert _exit_code(["session", "context", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["branchIds"] == ["u1"]
    assert captured.err.splitlines() == [
        *(f"ctxmodes: warning: {path}: line {n}: not valid JSON (skipped)" for n in range(3, 8)),
        f"ctxmodes: warning: {path}: … and 4995 more skipped lines",
    ]
    # --strict still refuses the file, counting every bad line.
    assert _exit_code(["session", "context", str(path), "--strict"]) == 1
    assert "(and 4999 more)" in capsys.readouterr().err


@pytest.mark.slow  # runs ctxmodes as a process, in a directory it removes first
@pytest.mark.parametrize("argv", [["--help"], ["-p", "hi"], ["session", "list"]])
def test_a_working_directory_removed_under_the_shell_is_one_line(
    tmp_path: Path, argv: list[str]
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    command = shlex.join([*CTXMODES, *argv])
    done = subprocess.run(
        ["sh", "-c", f'cd {shlex.quote(str(gone))} && rmdir "$PWD" && exec {command}'],
        env=ctxmodes_environment(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "ctxmodes: error: the working directory no longer exists: cd to one that does\n"
    )


def test_prompt_files_that_are_fifos_or_devices_are_not_read(
    tmp_path: Path,
    fifo: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A system prompt naming ``/dev/zero`` or a FIFO is a warning (the name is then the
    text, as for a file that cannot be read), a model script naming one is one error line:
    none of them is read, where each used to wait for ever or fill memory."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "answered"}]}))
    argv = ["-p", "--no-session", "--model", f"scripted:{script}", "--system-prompt"]
    assert _exit_code([*argv, "/dev/zero", "--append-system-prompt", str(fifo), "hi"]) == 0
    out, err = capsys.readouterr()
    assert out == "answered\n"
    assert err.splitlines() == [
        "Warning: Could not read /dev/zero: not a regular file (it is a character device)",
        f"Warning: Could not read {fifo}: not a regular file (it is a FIFO)",
    ]
    assert _exit_code(["-p", "--no-session", "--model", "scripted:/dev/zero", "hi"]) == 1
    assert capsys.readouterr().err == (
        "ctxmodes: error: cannot read script /dev/zero: not a regular file (it is a character "
        "device)\n"
    )
