"""``!`` and ``!!`` in the terminal go through ``ctx_user_bash``, also while the agent works:
a plugin's result is shown and recorded, and a plugin's runner that fails is said in Pi's
words with nothing recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.agents import make_agent
from support.terminal import ENTER, GateTool, run_terminal

from ctxmodes import UserBashResult, UserCommandResult, hookimpl


class Remote:
    """Answers ``# replace`` commands itself and runs ``# fail`` ones on a host that cannot
    be reached; leaves the rest to the local shell."""

    def __init__(self) -> None:
        self.excluded: list[bool] = []

    @hookimpl
    def ctx_user_bash(self, session, event):
        self.excluded.append(event.exclude_from_context)
        if "# replace" in event.command:
            return UserBashResult(result=UserCommandResult("answered-by-plugin\n", 0))
        if "# fail" in event.command:
            return UserBashResult(operations=_unreachable)
        return None


def _unreachable(command: str, cwd: Path, on_data: Any, signal: Any, timeout: Any) -> int:
    raise ConnectionError("remote unreachable")


def _messages(agent) -> list[dict[str, Any]]:
    lines = agent.session_file.read_text().splitlines()
    return [entry["message"] for entry in map(json.loads, lines) if entry["type"] == "message"]


def _bash(agent) -> list[dict[str, Any]]:
    return [m for m in _messages(agent) if m["role"] == "bashExecution"]


def test_bang_commands_ask_the_plugins(tmp_path: Path) -> None:
    plugin = Remote()
    agent = make_agent(tmp_path, [], plugins=[plugin])

    async def scenario(t):
        await t.type("!echo never # replace" + ENTER)
        await t.printed("answered-by-plugin")
        await t.idle()
        await t.type("!!echo never # fail" + ENTER)
        await t.printed("Bash command failed: remote unreachable")
        await t.idle()
        await t.type("!echo local-shell" + ENTER)
        await t.printed("local-shell")
        await t.idle()

    run_terminal(agent, scenario)
    assert plugin.excluded == [False, True, False]
    assert [(m["command"], m["output"]) for m in _bash(agent)] == [
        ("echo never # replace", "answered-by-plugin\n"),
        ("echo local-shell", "local-shell\n"),
    ]


def test_a_bang_command_typed_while_the_agent_works_asks_the_plugins(tmp_path: Path) -> None:
    gate = GateTool()
    plugin = Remote()
    agent = make_agent(
        tmp_path, [{"tool_calls": [{"name": "gate"}]}, {"text": "done"}], gate, plugins=[plugin]
    )

    async def scenario(t):
        await t.type("start" + ENTER)
        await t.until(gate.entered.is_set)
        await t.type("!echo never # replace" + ENTER)
        await t.until(lambda: plugin.excluded == [False], "the plugin to be asked")
        gate.opened.set()
        await t.printed("done")
        await t.idle()
        await t.printed("answered-by-plugin")

    run_terminal(agent, scenario)
    roles = [m["role"] for m in _messages(agent)]
    # Recorded when the run ends, as Pi records a command typed meanwhile.
    assert roles == ["user", "assistant", "toolResult", "assistant", "bashExecution"]
    assert _bash(agent)[0]["output"] == "answered-by-plugin\n"
