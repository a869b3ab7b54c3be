"""The interactive session end to end in a real terminal (tmux), with the scripted model:
a prompt streams, a steer is queued during a tool call, a Tree rollover happens while text
is being typed (the text survives it and is sent after the new marker), ``/tree`` goes to
an archived window and back, ``/compact``, ``/export``, ``/quit``. The session file then
equals the one the same operations produce through the embedding API, and opens in Pi."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.pi_oracle import require_pi
from support.tmux import WAIT, Tmux, ctxmodes_command, private_env

from ctxmodes import NavigationRequest
from ctxmodes.sdk import ToolStarted, open_agent

PROMPT = "\u203a "  # the editor's prompt
BIG = "big-start " + "lorem ipsum dolor sit amet " * 3500 + "end-of-big"
GATE = "while [ ! -e {name} ]; do sleep 0.02; done; echo {name}-passed"
SCRIPT: dict[str, Any] = {
    "responses": [
        {
            "text": "Working on it.",
            "tool_calls": [{"name": "bash", "arguments": {"command": GATE.format(name="go1")}}],
        },
        {
            "text": "Steered: noted.",
            "tool_calls": [{"name": "bash", "arguments": {"command": GATE.format(name="go2")}}],
        },
        {"text": "Rolling over.", "tool_calls": [{"name": "new_context"}]},
        {"text": "Window one is open."},
        {"text": BIG},
    ],
    "summaries": [
        "Window 0: worked, was steered, rolled over.",
        "Compacted: window 1 and the big reply.",
        "Compacted: the start of the split turn.",
    ],
}

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
    pytest.mark.pi,
]


def run_in_terminal(work: Path, script: Path, session: Path, export: Path) -> str:
    env = private_env(work)
    command = ctxmodes_command(
        "chat",
        "--mode",
        "tree",
        "--model",
        f"scripted:{script}",
        "--session",
        str(session),
        "--cwd",
        str(work),
    )
    tmux = Tmux(command, env)
    try:
        tmux.wait("scripted")  # the footer is drawn
        tmux.type("start")
        tmux.key("Enter")
        tmux.wait("Working on it.")
        tmux.wait("→ $ ")
        tmux.type("steer text")
        tmux.key("Enter")
        tmux.wait("Steering: steer text")
        (work / "go1").touch()
        tmux.wait("Steered: noted.")
        tmux.wait("while [ ! -e go2 ]")
        tmux.type("typed during rollover")
        (work / "go2").touch()
        screen = tmux.wait("Window one is open.")
        assert "context window 1 — previous window archived" in screen
        # The draft is still in the editor, above the footer, after the new window began
        # (drawn again a moment after the reply).
        tmux.until(
            lambda screen: screen.rstrip().splitlines()[-3] == PROMPT + "typed during rollover"
        )
        tmux.key("Enter")
        tmux.wait("end-of-big")
        tmux.type("/tree")
        tmux.key("Enter")
        tmux.wait("Session tree")
        tmux.type("working on")
        tmux.wait("archived window 0")
        tmux.key("Enter")
        tmux.wait("Summarize branch?")
        tmux.key("Enter")
        tmux.wait("Navigated to selected point")
        tmux.type("/tree")
        tmux.key("Enter")
        tmux.wait("Session tree")
        tmux.type("big-start")
        tmux.key("Enter")
        tmux.wait("Summarize branch?")
        tmux.key("Enter")
        deadline = time.monotonic() + WAIT
        while tmux.screen().count("Navigated to selected point") < 2:
            assert time.monotonic() < deadline, tmux.screen()[-3000:]
            time.sleep(0.05)
        tmux.type("/compact")
        tmux.key("Enter")
        tmux.wait("Compacted from")
        tmux.type(f"/export {export}")
        tmux.key("Enter")
        tmux.wait("Session exported to:")
        tmux.type("/quit")
        tmux.key("Enter")
        return tmux.wait("CTXMODES-EXIT=0")
    finally:
        tmux.close()


def run_through_the_api(work: Path, script: Path, session: Path) -> None:
    started: list[ToolStarted] = []
    tool_started = threading.Condition()

    def listen(event: object) -> None:
        if isinstance(event, ToolStarted):
            with tool_started:
                started.append(event)
                tool_started.notify_all()

    def wait_tools(count: int) -> None:
        with tool_started:
            assert tool_started.wait_for(lambda: len(started) >= count, WAIT)

    with open_agent(
        cwd=work, mode="tree", model=f"scripted:{script}", session_file=session
    ) as agent:
        agent.subscribe(listen)
        agent.submit("start")
        wait_tools(1)
        agent.submit("steer text")
        (work / "go1").touch()
        wait_tools(2)
        (work / "go2").touch()
        assert agent.wait_for_idle(WAIT)
        agent.prompt("typed during rollover")
        working = _entry_with_text(session, "Working on it.")
        big = _entry_with_text(session, "big-start")
        agent.navigate(NavigationRequest(working))
        agent.navigate(NavigationRequest(big))
        agent.compact()
        assert agent.wait_for_idle(WAIT)


def _entry_with_text(session: Path, text: str) -> str:
    for line in session.read_bytes().splitlines()[1:]:
        entry = orjson.loads(line)
        content = (entry.get("message") or {}).get("content") or []
        if any(
            isinstance(block, dict) and str(block.get("text", "")).startswith(text)
            for block in content
        ):
            return str(entry["id"])
    raise AssertionError(f"no entry starts with {text!r}")


_IDS = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b[0-9a-f]{8}\b"
)


def normalized(session: Path) -> list[Any]:
    """The file with ids numbered by first appearance and clock values and paths removed."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"<id{len(names)}>")

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if k not in ("timestamp", "cwd")}
        if isinstance(value, list):
            return [scrub(item) for item in value]
        if isinstance(value, str):
            return _IDS.sub(rename, value)
        return value

    lines = session.read_bytes().splitlines()
    return [scrub(orjson.loads(line)) for line in lines[1:]]


def test_the_terminal_session_end_to_end(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    # Same-length working directories: the system prompt names the directory, and the
    # scripted model's usage counts the prompt's characters.
    tui, api = tmp_path / "tui", tmp_path / "api"
    tui.mkdir()
    api.mkdir()
    tui_session, api_session = tui / "session.jsonl", api / "session.jsonl"
    export = tmp_path / "page.html"

    screen = run_in_terminal(tui, script, tui_session, export)
    run_through_the_api(api, script, api_session)

    # Printed once as it happened; each /tree move then prints the branch it lands on.
    live = screen.split("── session")[0]
    assert live.count("context window 1 — previous window archived") == 1
    assert screen.count("── session") == 2
    assert screen.count("context window 2 — after compaction") == 1
    assert screen.count("Compacted from") == 1
    ours = normalized(tui_session)
    assert ours == normalized(api_session)
    user_texts = [
        e["message"]["content"][0]["text"]
        for e in ours
        if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    assert user_texts == ["start", "steer text", "typed during rollover"]
    assert "archived window 0 (hidden from the model)" in export.read_text(encoding="utf-8")

    pi = require_pi()
    (answer,) = pi.open_many([{"file": str(tui_session), "at": []}])
    assert "openError" not in answer
    entries = [orjson.loads(line) for line in tui_session.read_bytes().splitlines()[1:]]
    assert answer["entryCount"] == len(entries)
    assert answer["leafId"] == entries[-1]["id"]
