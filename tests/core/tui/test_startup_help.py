"""The start-up header's help: Pi's collapsed line of the main keys and the line naming the
key that expands it, and Pi's expanded list, with the keys ``keybindings.json`` binds now;
expanded by ``app.tools.expand`` until a tool has run, or from the start with ``--verbose``.
The real Pi, in a terminal, draws the same lines with its default keys and with rebound
ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_print import pi_terminal
from support.terminal import ENTER, Terminal, run_terminal
from support.tmux import Tmux, ctxmodes_command, private_env, quote

from ctxmodes.config import TerminalSettings
from ctxmodes.tui.keymap import KeyMap

#: Every action the header names, each on keys of its own that Pi binds to nothing else,
#: and ``app.interrupt`` on two keys.
REBOUND: dict[str, Any] = {
    "app.interrupt": ["escape", "alt+i"],
    "app.clear": "alt+c",
    "app.exit": "alt+q",
    "app.suspend": "alt+z",
    "app.thinking.cycle": "alt+t",
    "app.model.cycleForward": "alt+n",
    "app.model.cycleBackward": "alt+m",
    "app.model.select": "alt+l",
    "app.tools.expand": "alt+o",
    "app.thinking.toggle": "alt+h",
    "app.editor.external": "alt+g",
    "app.message.followUp": "alt+s",
    "app.message.dequeue": "alt+u",
    "app.clipboard.pasteImage": "alt+v",
    "tui.editor.deleteToLineEnd": "alt+k",
}
ALT_O = "\x1bo"
CTRL_O = "\x0f"


def _keymap(tmp_path: Path, bindings: dict[str, Any]) -> KeyMap:
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    return KeyMap.load(path)


def _help_lines(block: str) -> list[str]:
    """The help of a header block printed by ctxmodes: its lines after the session file's
    name (however the terminal wrapped that), up to the loaded resources."""
    lines = block.splitlines()
    start = next(index for index, line in enumerate(lines) if line.endswith(".jsonl")) + 1
    help_lines: list[str] = []
    for line in lines[start:]:
        if not line.strip() or line.startswith("["):
            break
        help_lines.append(line.strip())
    return help_lines


def _ours(tmp_path: Path, keymap: KeyMap, expand: str) -> tuple[list[str], list[str]]:
    """ctxmodes' collapsed help at start-up, then the help ``expand`` prints."""
    agent = make_agent(tmp_path, [])

    async def scenario(t: Terminal) -> None:
        await t.printed("more")
        await t.type(expand)
        await t.until(lambda: len(t.transcript) > 1, "the expanded header")

    terminal = run_terminal(agent, scenario, keymap=keymap)
    return _help_lines(terminal.transcript[0]), _help_lines(terminal.transcript[1])


def test_the_header_names_the_keys_bound_now_in_pi_s_words(tmp_path: Path) -> None:
    collapsed, expanded = _ours(tmp_path, _keymap(tmp_path, REBOUND), ALT_O)
    assert collapsed == [
        "escape/alt+i interrupt · alt+c/alt+q clear/exit · / commands · ! bash · alt+o more",
        "Press alt+o to show full startup help and loaded resources.",
    ]
    assert expanded[:4] == [
        "escape/alt+i to interrupt",
        "alt+c to clear",
        "alt+c twice to exit",
        "alt+q to exit (empty)",
    ]
    assert "alt+n/alt+m to cycle models" in expanded
    assert "alt+u to edit all queued messages" in expanded
    assert "alt+k to delete to end" in expanded
    # Pi's line for what this terminal does not do.
    assert not any("drop files" in line for line in expanded)


def test_an_unbound_action_leaves_its_words_as_pi_s_hint_does(tmp_path: Path) -> None:
    collapsed, expanded = _ours(tmp_path, _keymap(tmp_path, {"app.clear": []}), CTRL_O)
    assert collapsed[0].startswith("escape interrupt · /ctrl+d clear/exit · ")
    assert "to clear" in expanded
    assert "twice to exit" in expanded


def test_the_expand_key_shows_the_header_until_a_tool_ran_then_its_output(tmp_path: Path) -> None:
    agent = make_agent(
        tmp_path,
        [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "printf 'one\\ntwo\\n'"}}]},
            {"text": "done"},
        ],
    )
    seen: dict[str, str] = {}

    async def scenario(t: Terminal) -> None:
        await t.type(CTRL_O)
        await t.printed("ctrl+o to expand tools")
        seen["before"] = t.text()
        await t.type("run it" + ENTER)
        await t.idle()
        await t.type(CTRL_O)
        await t.until(lambda: t.text().count("one\ntwo") >= 1, "the full output")
        seen["after"] = t.text()[len(seen["before"]) :]

    run_terminal(agent, scenario)
    assert "ctrl+o to expand tools" not in seen["after"]
    assert "one\ntwo" in seen["after"]


def test_verbose_starts_with_the_header_expanded(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [])

    async def scenario(t: Terminal) -> None:
        await t.printed("to expand tools")

    header = run_terminal(agent, scenario, verbose=True).transcript[0]
    assert "escape to interrupt" in header
    assert "Press ctrl+o" not in header


def test_a_quiet_start_has_no_header_and_the_key_has_no_header_to_expand(tmp_path: Path) -> None:
    agent = make_agent(tmp_path, [])

    async def scenario(t: Terminal) -> None:
        await t.type(CTRL_O)
        await t.printed("No tool output yet")

    settings = TerminalSettings(quiet_startup=True)
    text = run_terminal(agent, scenario, settings=settings).text()
    assert "interrupt" not in text


def _pi_header(tmp_path: Path, bindings: dict[str, Any] | None, expand: str) -> list[list[str]]:
    """The real Pi's header help as its terminal shows it at start-up, then once ``expand``
    (a tmux key name) expanded it."""
    project = tmp_path / "pi-project"
    project.mkdir()
    agent_dir = tmp_path / "pi-agent"
    agent_dir.mkdir()
    if bindings is not None:
        (agent_dir / "keybindings.json").write_text(json.dumps(bindings))
    tmux = pi_terminal(project, agent_dir, tmp_path, columns=160, rows=60)
    try:
        collapsed = tmux.wait("to show full startup help")
        tmux.key(expand)
        expanded = tmux.wait("Tool output: expanded")
    finally:
        tmux.close()
    return [_pi_help(collapsed), _pi_help(expanded)]


def _pi_help(screen: str) -> list[str]:
    """The lines under Pi's ``pi v0.85.0`` up to the first blank line."""
    lines = [line.strip() for line in screen.splitlines()]
    start = next(index for index, line in enumerate(lines) if line.startswith("pi v")) + 1
    end = lines.index("", start)
    return lines[start:end]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.pi
def test_the_real_pi_draws_the_same_help_with_its_default_keys(tmp_path: Path) -> None:
    pi_collapsed, pi_expanded = _pi_header(tmp_path, None, "C-o")
    collapsed, expanded = _ours(tmp_path, KeyMap.load(None), CTRL_O)
    assert collapsed == pi_collapsed
    # Pi's own line for what this terminal does not do is left out; a terminal sends
    # Shift+Ctrl+P as Ctrl+P, so Alt+P, Pi's key where the two are one, stands in for it.
    shown = [line for line in pi_expanded if line != "drop files to attach"]
    assert len(shown) == len(pi_expanded) - 1
    assert expanded == [line.replace("shift+ctrl+p", "alt+p") for line in shown]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.pi
def test_the_real_pi_draws_the_same_help_with_rebound_keys(tmp_path: Path) -> None:
    pi_collapsed, pi_expanded = _pi_header(tmp_path, REBOUND, "M-o")
    collapsed, expanded = _ours(tmp_path, _keymap(tmp_path, REBOUND), ALT_O)
    assert collapsed == pi_collapsed
    assert expanded == [line for line in pi_expanded if line != "drop files to attach"]


@pytest.mark.slow  # a real terminal, end to end
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_rebound_key_shows_in_the_header_in_a_real_terminal(tmp_path: Path) -> None:
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "keybindings.json").write_text(json.dumps({"app.tools.expand": "alt+o"}))
    (tmp_path / "script.json").write_text('{"responses": [{"text": "hello"}]}')
    command = ctxmodes_command("chat", "--model", "scripted:script.json")
    tmux = Tmux(
        ["sh", "-c", f"cd {quote(str(tmp_path))} && " + " ".join(map(quote, command))],
        private_env(tmp_path),
    )
    try:
        tmux.wait("Press alt+o to show full startup help and loaded resources.")
        tmux.key("M-o")
        tmux.wait("alt+o to expand tools")
    finally:
        tmux.close()


@pytest.mark.slow  # a real terminal, end to end
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_verbose_on_the_command_line_starts_with_the_header_expanded(tmp_path: Path) -> None:
    (tmp_path / "script.json").write_text('{"responses": [{"text": "hello"}]}')
    command = ctxmodes_command("chat", "--verbose", "--model", "scripted:script.json")
    tmux = Tmux(
        ["sh", "-c", f"cd {quote(str(tmp_path))} && " + " ".join(map(quote, command))],
        private_env(tmp_path),
    )
    try:
        screen = tmux.wait("ctrl+o to expand tools")
    finally:
        tmux.close()
    assert "Press ctrl+o" not in screen


def test_the_header_ends_saying_ctxmodes_can_explain_itself(tmp_path: Path) -> None:
    from ctxmodes.tui.startup_help import ASK_ABOUT_CTXMODES

    agent = make_agent(tmp_path, [])

    async def scenario(t: Terminal) -> None:
        await t.printed(ASK_ABOUT_CTXMODES)

    header = run_terminal(agent, scenario).transcript[0]
    lines = [line.strip() for line in header.splitlines()]
    # Under the help and a blank line, as Pi's line under its own.
    at = lines.index(ASK_ABOUT_CTXMODES)
    assert lines[at - 1] == ""
    assert lines[at - 2].startswith("Press ")
