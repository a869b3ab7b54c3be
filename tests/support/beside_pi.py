"""The real Pi and ctxmodes side by side, each in a real terminal (tmux) on the same
loopback model, for the tests that compare what the two draw."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from support.pi_print import API, pi_terminal
from support.tmux import Tmux, ctxmodes_command, private_env
from support.wire_server import Reply

Program = Literal["pi", "ours"]
PROGRAMS: tuple[Program, ...] = ("pi", "ours")


def write_loop_models(agent: Path, base_url: str, models: list[dict[str, Any]]) -> None:
    """Pi's ``models.json`` in the agent directory ``agent``, which both programs read:
    provider ``loop`` at ``base_url`` (a :class:`~support.wire_server.WireServer`'s, or
    any address when nothing is sent), serving ``models``."""
    provider = {"baseUrl": f"{base_url}/v1", "api": API, "apiKey": "sk-loop", "models": models}
    (agent / "models.json").write_text(json.dumps({"providers": {"loop": provider}}))


def open_terminal(
    program: Program, project: Path, agent: Path, home: Path, *arguments: str, columns: int = 120
) -> Tmux:
    """``pi ARGUMENTS`` or ``ctxmodes chat --mode off ARGUMENTS`` in ``project``, with
    ``agent`` as Pi's agent directory (ctxmodes reads Pi's settings and models from it)."""
    if program == "pi":
        return pi_terminal(project, agent, home, *arguments, columns=columns)
    env = {**private_env(home), "PI_CODING_AGENT_DIR": str(agent)}
    command = ctxmodes_command("chat", "--mode", "off", *arguments)
    return Tmux(["env", "-C", str(project), *command], env, columns=columns)


def wait_until_ready(tmux: Tmux) -> None:
    """Until the program reads keys: its first frame drawn (Pi reads keys once it is)."""
    tmux.wait("Press ctrl+o")
    time.sleep(0.5)


def ask_in_turn(tmux: Tmux, count: int) -> None:
    """Send ``question N`` and wait for ``answer N``, for N from 0 to ``count - 1``."""
    wait_until_ready(tmux)
    for n in range(count):
        tmux.type(f"question {n}")
        tmux.key("Enter")
        tmux.wait(f"answer {n}")


def usage_reply(text: str, prompt: int, cached: int, completion: int) -> Reply:
    """A Chat Completions answer of ``text`` that reports its usage: ``prompt`` tokens, of
    them ``cached`` read from the cache, and ``completion``."""

    def data(body: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    done = {"index": 0, "delta": {}, "finish_reason": "stop"}
    spent = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
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
