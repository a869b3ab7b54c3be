"""A plugin's command named like a built-in command of the terminal: said under
``[Extension issues]`` at start-up and after ``/reload`` in Pi's words, left out of
completion as Pi leaves it out; the real Pi, given extensions registering the same names,
says the same."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_print import pi_terminal
from support.terminal import ENTER, run_terminal

from ctxmodes import Command, hookimpl
from ctxmodes.tui.command_conflicts import SECTION
from ctxmodes.tui.reload import RELOADED


class CommandsPlugin:
    """Registers one command for each name, answering with the plugin's own line."""

    def __init__(self, tag: str, *names: str) -> None:
        self.tag = tag
        self.names = names
        self.ran: list[str] = []

    @hookimpl
    def ctx_register_commands(self, register: Any, session: Any) -> None:
        for name in self.names:
            register(Command(name, f"{self.tag}'s {name}", self._run(name)))

    def _run(self, name: str) -> Any:
        def handler(args: str, context: Any) -> None:
            self.ran.append(name)

        return handler


class TreePlugin(CommandsPlugin):
    def __init__(self) -> None:
        super().__init__("tree plugin", "tree", "hello")


class FirstModelPlugin(CommandsPlugin):
    def __init__(self) -> None:
        super().__init__("first", "model")


class SecondModelPlugin(CommandsPlugin):
    def __init__(self) -> None:
        super().__init__("second", "model")


def _issue_lines(text: str) -> list[str]:
    """The warnings of the ``[Extension issues]`` section, in order."""
    return re.findall(r"Extension command '/[^']+' conflicts with .*?\.(?: .*?\.)", text)


def _plugins() -> list[CommandsPlugin]:
    return [TreePlugin(), FirstModelPlugin(), SecondModelPlugin()]


def test_shadowed_commands_are_said_at_start_up_and_after_reload_and_left_out_of_completion(
    tmp_path: Path,
) -> None:
    plugins = _plugins()
    agent = make_agent(tmp_path, [], plugins=plugins)
    offered: dict[str, list[str]] = {}

    async def scenario(t: Any) -> None:
        for typed in ("/mod", "/tre", "/hel"):
            await t.type(typed)
            await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
            offered[typed] = [c.text for c in t.session.buffer.complete_state.completions]
            t.session.buffer.reset()
        await t.type("/model:2" + ENTER)
        # pluggy called FirstModelPlugin second: its /model is the second one.
        await t.until(lambda: plugins[1].ran == ["model"], "the first plugin's /model")
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)

    text = run_terminal(agent, scenario).text()
    assert text.count(f"[{SECTION}]") == 2  # at start-up, then after /reload
    for plugin in ("TreePlugin", "FirstModelPlugin", "SecondModelPlugin"):
        assert text.count(f"plugin {__name__}.{plugin}\n") == 2
    # pluggy calls the plugin given last first, as Pi numbers its extensions' in load order.
    expected = [
        "Extension command '/model' conflicts with built-in interactive command. "
        "Available as '/model:1'.",
        "Extension command '/model' conflicts with built-in interactive command. "
        "Available as '/model:2'.",
        "Extension command '/tree' conflicts with built-in interactive command. "
        "Skipping in autocomplete.",
    ]
    assert _issue_lines(text) == expected + expected
    assert not any(name.startswith("/model:") for name in offered["/mod"])
    assert "/model " in offered["/mod"]
    assert offered["/tre"] == ["/tree "]
    assert offered["/hel"] == ["/hello "]


def test_without_a_shadowed_command_there_is_no_section(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [], plugins=[CommandsPlugin("only", "hello")])

    async def scenario(t: Any) -> None:
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)

    assert SECTION not in run_terminal(agent, scenario).text()


_EXTENSION = """export default function (pi: any) {{
  for (const name of {names}) pi.registerCommand(name, {{ handler: async () => {{}} }});
}}
"""


@pytest.mark.pi
def test_the_real_pi_says_the_same_for_extensions_registering_the_same_names(
    tmp_path: Path,
) -> None:
    """Pi's extensions loaded in the order pluggy calls the plugins above (the last given
    first): Pi's warnings, read off its terminal, are ours word for word and in order."""
    project = tmp_path / "project"
    project.mkdir()
    arguments: list[str] = []
    for plugin in reversed(_plugins()):
        path = project / f"{type(plugin).__name__}.ts"
        path.write_text(_EXTENSION.format(names=list(plugin.names)))
        arguments += ["-e", str(path)]
    agent_dir = tmp_path / "pi-agent"
    agent_dir.mkdir()
    tmux = pi_terminal(project, agent_dir, tmp_path, *arguments, columns=200)
    try:
        screen = tmux.wait(f"[{SECTION}]")
        deadline = time.monotonic() + 10
        while len(_issue_lines(screen)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
            screen = tmux.screen()
    finally:
        tmux.close()
    pi_lines = _issue_lines(screen)

    (tmp_path / "ours").mkdir()
    ours = make_agent(tmp_path / "ours", [], plugins=_plugins())

    async def scenario(t: Any) -> None:
        await t.printed(SECTION)

    assert _issue_lines(run_terminal(ours, scenario).text()) == pi_lines
    assert len(pi_lines) == 3
