"""``ctxmodes run --mode tree --trace``: after a rollover, the archived window and its summary
never reach the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRET = "archived-detail-4410"
SUMMARY = "SUMMARY-MARKER: window zero checked the deploy script."


@pytest.mark.slow  # runs ctxmodes in a process of its own
def test_the_trace_shows_the_cut(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "responses": [
                    {"tool_calls": [{"name": "bash", "arguments": {"command": f"echo {SECRET}"}}]},
                    {"tool_calls": [{"name": "new_context"}]},
                    {"text": "working in window one"},
                    {"text": "still in window one"},
                ],
                "summaries": [SUMMARY],
            }
        )
    )
    trace = tmp_path / "trace.jsonl"
    session = tmp_path / "session.jsonl"
    env = {**os.environ, "CTXMODES_CONFIG_DIR": str(tmp_path / "config")}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxmodes",
            "run",
            "--mode",
            "tree",
            "--model",
            f"scripted:{script}",
            "--session",
            str(session),
            "--cwd",
            str(tmp_path),
            "--trace",
            str(trace),
            "check the deploy script",
            "and continue",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    requests = [json.loads(line) for line in trace.read_text().splitlines()]
    purposes = [r["purpose"] for r in requests]
    assert purposes == ["turn", "turn", "branch_summary", "turn", "turn"]
    before, summary_call, after = requests[:2], requests[2], requests[3:]
    assert SECRET in json.dumps(before[-1]["messages"])
    assert SECRET in json.dumps(summary_call["messages"])
    for request in after:
        sent = json.dumps(request["messages"])
        assert SECRET not in sent
        assert "SUMMARY-MARKER" not in sent
        assert "check the deploy script" not in sent
    # The second prompt lands in window one, after its marker.
    assert "and continue" in json.dumps(after[-1]["messages"])
    # The new window opens with its marker, sent as a developer message.
    first = after[0]["messages"][0]
    assert first["role"] == "developer"
    assert "<context_window>" in json.dumps(first)
