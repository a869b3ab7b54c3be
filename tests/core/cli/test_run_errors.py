"""``ctxmodes run`` on paths and files it cannot use: one line on standard error and exit
status 1, never a traceback. Run as a real process, so that anything logged shows."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli_process import run_cli
from support.pi_oracle import require_oracle_cases

pytestmark = pytest.mark.slow

SCRIPT = {"responses": [{"text": "fine"}, {"text": "again"}]}


def ctxmodes(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(tmp_path, SCRIPT, *args, env=env)


def assert_one_line(result: subprocess.CompletedProcess[str], expected: str) -> None:
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("ctxmodes: error: ")
    assert expected in result.stderr


def test_a_version_1_session_that_needs_migration(tmp_path: Path) -> None:
    legacy = tmp_path / "v1.jsonl"
    shutil.copy(require_oracle_cases() / "foreign_v1_migration.jsonl", legacy)
    before = legacy.read_bytes()
    assert_one_line(
        # --cwd: the file records a directory of the machine it was made on.
        ctxmodes(tmp_path, "--session", str(legacy), "--cwd", str(tmp_path), "hello"),
        "cannot append to a version 1 session file",
    )
    assert legacy.read_bytes() == before


def test_a_trace_path_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    assert_one_line(
        ctxmodes(tmp_path, "--trace", "traces", "hello"), "cannot open trace file traces"
    )


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs /proc")
@pytest.mark.parametrize("option", ["--trace", "--session"])
def test_a_path_in_proc(tmp_path: Path, option: str) -> None:
    if not os.access("/proc/version", os.W_OK):
        pytest.skip("/proc/version cannot be opened for writing here")
    assert_one_line(ctxmodes(tmp_path, option, "/proc/version", "hello"), "/proc/version")


def test_a_session_directory_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    # Whatever it needs first under that directory (its model list, its session directory),
    # the command says which path it cannot use.
    assert_one_line(
        ctxmodes(tmp_path, "hello", env={"PI_CODING_AGENT_DIR": str(blocker / "agent")}),
        f"{blocker}/agent/",
    )


@pytest.mark.parametrize("output", ["--print", "--json"])
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["/compact"], "/compact: Nothing to compact (session too small)"),
        (["--session-dir", "blocker", "hello"], "cannot create session directory"),
    ],
    ids=["a failed command", "a session directory that cannot be made"],
)
def test_print_and_json_mode_say_the_error_that_stops_them_once(
    tmp_path: Path, output: str, args: list[str], expected: str
) -> None:
    """Their standard error carries what the run notifies; the error that stops the run is
    the command's one line, not also the notice before it."""
    (tmp_path / "blocker").write_text("")
    assert_one_line(ctxmodes(tmp_path, output, *args), expected)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64k tmpfs with room left for a session header and a little more."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (disk / "filler").write_bytes(b"\0" * (58 * 1024))
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk(tmp_path: Path, full_disk: Path) -> None:
    result = ctxmodes(tmp_path, "--session", str(full_disk / "s.jsonl"), "hello " * 2000)
    assert_one_line(result, "No space left on device")


def test_a_trace_on_a_full_disk_loses_no_request_without_a_word(
    tmp_path: Path, full_disk: Path
) -> None:
    trace = full_disk / "trace.jsonl"
    result = ctxmodes(tmp_path, "--trace", str(trace), "hello " * 2000)
    assert_one_line(result, f"cannot write trace file {trace}: No space left on device")


@pytest.mark.slow  # starts ctxmodes, lets its tool's command start, then signals it
@pytest.mark.parametrize(
    ("argv", "name", "to_group", "status", "last_line"),
    [
        (["run"], "SIGINT", True, 130, "ctxmodes: interrupted"),
        (["-p"], "SIGTERM", False, 143, None),
        (["--mode", "json"], "SIGHUP", False, 129, None),
        (["--mode", "rpc"], "SIGTERM", False, 143, None),
    ],
    ids=["ctrl-c", "sigterm-print", "sighup-json", "sigterm-rpc"],
)
def test_a_signal_while_a_tool_runs_winds_the_run_down_and_ends_with_the_shells_status(
    tmp_path: Path,
    argv: list[str],
    name: str,
    to_group: bool,
    status: int,
    last_line: str | None,
) -> None:
    """Ctrl-C (SIGINT to the process group, as a terminal sends it), or SIGTERM or SIGHUP to
    ctxmodes alone (``kill``, a closed terminal), while the model's `bash` call runs: the
    shell's status for the signal, no traceback (Ctrl-C says so in one line, as Pi's print
    and RPC modes say nothing on the others), the tool's command stopped with the session's
    shell, and the session records the stopped call and reply as an abort does. The default
    action of SIGTERM and SIGHUP left the command running and the reply unrecorded."""
    import json
    import signal
    import sys
    import time

    # A command line of this test's own, to look for (tests may run side by side).
    command = f"sleep 30.{status}{len(argv)}{os.getpid()}"
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "responses": [
                    {
                        "text": "Waiting.",
                        "tool_calls": [{"name": "bash", "arguments": {"command": command}}],
                    },
                    {"text": "done"},
                ]
            }
        )
    )
    environment = dict(
        os.environ,
        PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
        CTXMODES_CONFIG_DIR=str(tmp_path / "config"),
    )
    rpc = "rpc" in argv
    process = subprocess.Popen(
        [sys.executable, "-m", "ctxmodes", *argv, "--model", f"scripted:{script}"]
        + ([] if rpc else ["wait"]),
        cwd=tmp_path,
        env=environment,
        # Print and JSON modes read standard input to its end first; RPC reads commands.
        stdin=subprocess.PIPE if rpc else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    if process.stdin is not None:
        process.stdin.write(json.dumps({"type": "prompt", "message": "wait"}) + "\n")
        process.stdin.flush()
    try:
        sessions = tmp_path / "agent" / "sessions"
        deadline = time.monotonic() + 30
        while not _running(command):
            assert time.monotonic() < deadline, "the tool's command never started"
            time.sleep(0.05)
        time.sleep(0.3)
        signum = getattr(signal, name)
        if to_group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == status, err
    assert err.splitlines()[-1:] == ([last_line] if last_line else [])
    assert "Traceback" not in err
    # Print mode prints the last reply at the end, which a signal leaves out.
    assert ("Waiting." in out) == ("-p" not in argv)
    assert not _running(command)
    # The run was stopped as an abort: the tool call has its result, the reply is recorded.
    (session,) = sessions.rglob("*.jsonl")
    messages = [
        entry["message"]
        for entry in map(json.loads, session.read_text().splitlines())
        if entry["type"] == "message"
    ]
    assert [(m["role"], m.get("stopReason")) for m in messages] == [
        ("user", None),
        ("assistant", "toolUse"),
        ("toolResult", None),
        ("assistant", "aborted"),
    ]


def _running(command: str) -> bool:
    """Whether a process of exactly this command line runs."""
    found = subprocess.run(["pgrep", "-xf", command], capture_output=True, check=False)
    return found.returncode == 0
