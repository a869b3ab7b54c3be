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
        ctxmodes(tmp_path, "--session", str(legacy), "hello"),
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
