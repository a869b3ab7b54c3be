"""Cache-miss notices beside the real Pi's (``showCacheMissNotices`` on), each program in a
real terminal on the same loopback model: the same line after a reply whose prompt the
cache missed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.beside_pi import (
    PROGRAMS,
    ask_in_turn,
    open_terminal,
    usage_reply,
    write_loop_models,
)
from support.wire_server import WireServer

pytestmark = [
    pytest.mark.slow,  # two real terminals, end to end
    pytest.mark.pi,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

#: Prompt tokens (of them, read from the cache) of each reply: the second prompt was sent
#: before but nothing of it came from the cache.
SPENT = [(30_000, 20_000), (31_000, 0)]
PRICES = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}


def _notice(screen: str) -> str:
    lines = [line.strip() for line in screen.splitlines() if "re-billed" in line]
    return lines[-1] if lines else ""


def test_both_say_the_cache_missed_in_the_same_words(tmp_path: Path) -> None:
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"showCacheMissNotices": True}))
    project = tmp_path / "project"
    project.mkdir()
    said: dict[str, str] = {}
    for program in PROGRAMS:
        replies = [usage_reply(f"answer {n}", *spent, 50) for n, spent in enumerate(SPENT)]
        with WireServer(replies) as server:
            write_loop_models(agent, server.base_url, [{"id": "m", "cost": PRICES}])
            tmux = open_terminal(program, project, agent, tmp_path, "--model", "loop/m")
            try:
                ask_in_turn(tmux, len(SPENT))
                said[program] = _notice(tmux.until(lambda screen: _notice(screen) != ""))
            finally:
                tmux.close()
    assert said["pi"] == "Cache miss: 30k tokens re-billed (~$0.08)"
    assert said["ours"] == said["pi"]
