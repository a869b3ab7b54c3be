"""Cache-miss notices beside the real Pi's (``showCacheMissNotices`` on), each program in a
real terminal on the same loopback model: the same line after a reply whose prompt the
cache missed."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API, pi_terminal
from support.tmux import Tmux, ctxmodes_command, private_env
from support.wire_server import Reply, WireServer

pytestmark = [
    pytest.mark.slow,  # two real terminals, end to end
    pytest.mark.pi,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

#: Prompt tokens (of them, read from the cache) of each reply: the second prompt was sent
#: before but nothing of it came from the cache.
SPENT = [(30_000, 20_000), (31_000, 0)]
PRICES = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}


def _reply(text: str, prompt: int, cached: int) -> Reply:
    def data(body: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    done = {"index": 0, "delta": {}, "finish_reason": "stop"}
    spent = {
        "prompt_tokens": prompt,
        "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    return Reply(
        [
            data({"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]}),
            data({"id": "c", "choices": [done]}),
            data({"id": "c", "choices": [], "usage": spent}),
            b"data: [DONE]\n\n",
        ]
    )


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
    for program in ("pi", "ours"):
        replies = [_reply(f"answer {n}", *spent) for n, spent in enumerate(SPENT)]
        with WireServer(replies) as server:
            provider = {
                "baseUrl": f"{server.base_url}/v1",
                "api": API,
                "apiKey": "sk-loop",
                "models": [{"id": "m", "cost": PRICES}],
            }
            (agent / "models.json").write_text(json.dumps({"providers": {"loop": provider}}))
            if program == "pi":
                tmux = pi_terminal(project, agent, tmp_path, "--model", "loop/m")
            else:
                env = {**private_env(tmp_path), "PI_CODING_AGENT_DIR": str(agent)}
                command = ctxmodes_command("chat", "--mode", "off", "--model", "loop/m")
                tmux = Tmux(["env", "-C", str(project), *command], env)
            try:
                tmux.wait("Press ctrl+o")
                time.sleep(0.5)  # Pi reads keys once its first frame is drawn
                for n in range(len(SPENT)):
                    tmux.type(f"question {n}")
                    tmux.key("Enter")
                    tmux.wait(f"answer {n}")
                said[program] = _notice(tmux.until(lambda screen: _notice(screen) != ""))
            finally:
                tmux.close()
    assert said["pi"] == "Cache miss: 30k tokens re-billed (~$0.08)"
    assert said["ours"] == said["pi"]
