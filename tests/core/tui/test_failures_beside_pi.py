"""Failures beside the real Pi's, each program in a real terminal on the same loopback
model: a retry series that gives up, and a ``/compact`` with nothing to compact, end on the
same error line."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from support.beside_pi import PROGRAMS, open_terminal, wait_until_ready, write_loop_models
from support.pi_print import API
from support.wire_server import Reply, WireServer, json_error, text_stream

pytestmark = [
    pytest.mark.slow,  # two real terminals, end to end
    pytest.mark.pi,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

RETRIES = 2


def _last_error(screen: str) -> str:
    errors = [line.strip() for line in screen.splitlines() if line.strip().startswith("Error:")]
    return errors[-1] if errors else ""


def _error_lines(
    tmp_path: Path, replies: list[Reply], typed: list[str], ends: str
) -> dict[str, str]:
    """For Pi and for ctxmodes: the last error line once one holds ``ends``, after each
    line of ``typed`` was sent (a prompt answered before the next is typed)."""
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    # Both read Pi's settings: quick retries.
    retry = {"retry": {"maxRetries": RETRIES, "baseDelayMs": 10}}
    (agent / "settings.json").write_text(json.dumps(retry))
    project = tmp_path / "project"
    project.mkdir()
    ended: dict[str, str] = {}
    for program in PROGRAMS:
        with WireServer(list(replies)) as server:
            write_loop_models(agent, server.base_url, [{"id": "m"}])
            tmux = open_terminal(program, project, agent, tmp_path, "--model", "loop/m")
            try:
                wait_until_ready(tmux)
                for line in typed:
                    tmux.type(line)
                    time.sleep(0.3)  # a command's menu opens before Enter runs it
                    tmux.key("Enter")
                    if line == "question":
                        tmux.wait("answer")
                        time.sleep(0.3)  # the run settles before the next line
                ended[program] = _last_error(tmux.until(lambda screen: ends in _last_error(screen)))
            finally:
                tmux.close()
    return ended


def test_both_say_the_retries_failed_in_the_same_words(tmp_path: Path) -> None:
    overloaded = Reply(json_error("upstream overloaded"), status=503)
    ended = _error_lines(tmp_path, [overloaded] * (RETRIES + 1), ["try"], "Retry failed")
    assert ended["pi"].startswith(f"Error: Retry failed after {RETRIES} attempts: 503")
    assert ended["ours"] == ended["pi"]


def test_both_say_there_is_nothing_to_compact_in_the_same_words(tmp_path: Path) -> None:
    answer = Reply(text_stream(API, "answer"))
    ended = _error_lines(tmp_path, [answer], ["question", "/compact"], "Compaction failed")
    assert ended["pi"] == "Error: Compaction failed: Nothing to compact (session too small)"
    assert ended["ours"] == ended["pi"]
