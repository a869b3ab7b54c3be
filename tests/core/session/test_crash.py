"""Writers killed with SIGKILL at random moments never lose an acknowledged entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmodes.session.manager import SessionManager

pytestmark = pytest.mark.faults

CRASH_LOOP = Path(__file__).resolve().parents[3] / "bench" / "crash_loop.py"
# Two runs: 200 kills in the suite (bench/crash_loop.py runs thousands).
KILLS = 100


@pytest.mark.skipif(os.name != "posix", reason="needs fork and SIGKILL")
@pytest.mark.parametrize(("durability", "seed"), [("fsync", 11), ("flush", 12)])
def test_killed_writers_keep_every_acknowledged_entry(
    tmp_path: Path, durability: str, seed: int
) -> None:
    path = tmp_path / "crash.jsonl"
    result = subprocess.run(
        [
            sys.executable,
            str(CRASH_LOOP),
            "--kills",
            str(KILLS),
            "--seed",
            str(seed),
            "--durability",
            durability,
            "--file",
            str(path),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["kills"] == KILLS
    assert report["problems"] == []
    # Every other writer is killed only after its first acknowledged entry.
    assert len(report["acknowledged"]) >= KILLS // 2
    # Checked again here, independently of the script's own verification.
    with SessionManager.open(path, read_only=True) as manager:
        present = {entry.id for entry in manager.get_entries()}
        assert set(report["acknowledged"]) <= present
        assert all(line.reason == "not valid JSON" for line in manager.skipped_lines)
        assert manager.get_session_name() == "after the crash loop"
