"""Every picker's hint line names the keys ``keybindings.json`` binds now: where Pi has the
dialog (a confirmation or an extension's question, ``Summarize branch?``, the multi-line
editor of its instructions, a tree entry's label, ``/trust``, ``/login``'s API key field and
its wait for a pasted URL, ``/share``'s wait for the gist), the line is the one Pi's own
component draws with the same bindings (less the keys no terminal reports apart, which are
skipped: Pi's default Shift+Enter for a new line); the pickers Pi draws no such line for
(``/fork``, ``/settings``, ``/login``'s list, ``/model``) name the bound keys too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.fake_gh import install_fake_gh
from support.pi_oracle import run_pi_script
from support.terminal import ENTER, run_terminal

from ctxmodes.tui.keymap import KeyMap

SCRIPT = Path(__file__).parents[2] / "support" / "pi_key_hints.mjs"
TREE_SCRIPT = SCRIPT.with_name("pi_tree_selector.mjs")

#: Pi's keys, and the same keys rebound: choosing also with Ctrl+Y, closing with Ctrl+Q
#: only, moving with Alt+K and Alt+J, a new line with Alt+N, the external editor Alt+E.
DEFAULT: dict[str, Any] = {}
REBOUND: dict[str, Any] = {
    "tui.select.confirm": ["ctrl+y", "enter"],
    "tui.select.cancel": "ctrl+q",
    "tui.select.up": "alt+k",
    "tui.select.down": "alt+j",
    "tui.input.newLine": "alt+n",
    "app.editor.external": "alt+e",
}
#: How the keys of each are written in a hint: choosing, closing, moving.
WRITTEN = {
    "default": ("enter", "escape/ctrl+c", "↑/↓"),
    "rebound": ("ctrl+y/enter", "ctrl+q", "alt+k/j"),
}


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials of the test's own, a browser that opens nothing, the sign-in's callback
    on any free port, and a ``gh`` whose gist never comes."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.setenv("CTXMODES_OAUTH_CALLBACK_PORT", "0")
    monkeypatch.setattr("webbrowser.open", lambda url: True)
    gh = install_fake_gh(tmp_path / "gh")
    gh.configure(gist="hangs")
    monkeypatch.setenv("PATH", gh.path_with_gh())


def our_hints(tmp_path: Path, bindings: dict[str, Any]) -> dict[str, str]:
    """Each picker opened in a session whose keybindings.json holds ``bindings``, and the
    hint line it draws."""
    keybindings = tmp_path / "keybindings.json"
    keybindings.write_text(json.dumps(bindings))
    agent = make_agent(tmp_path, [{"text": "one"}, {"text": "two"}], mode="tree")
    other = tmp_path / "other.jsonl"
    hints: dict[str, str] = {}

    async def opened(t: Any, name: str, command: str | None = None) -> None:
        if command is not None:
            await t.type(command + ENTER)
        await t.until(lambda: t.session.picker is not None, name)
        hints[name] = t.session.picker.hint

    async def scenario(t: Any) -> None:
        await t.type("first" + ENTER)
        await t.idle()
        await t.type("second" + ENTER)
        await t.idle()
        shutil.copy(agent.session_file, other)
        for name, command in (
            ("trust", "/trust"),
            ("settings", "/settings"),
            ("fork", "/fork"),
            ("login", "/login"),
            ("key", "/login groq key"),
            ("mode", "/mode off"),
            ("import", f"/import {other}"),
            ("model", "/model"),
        ):
            await opened(t, name, command)
            t.session.close_picker()
        for name, command, ended in (
            ("paste", "/login anthropic", "Login cancelled"),
            ("share", "/share", "Share cancelled"),
        ):
            await opened(t, name, command)
            t.session.cancel_picker()
            await t.printed(ended)
        await opened(t, "tree", "/tree")
        await t.type("L")
        await t.until(lambda: t.session.picker.free_text, "the label editor")
        await opened(t, "label")
        t.session.cancel_picker()
        await t.until(lambda: not t.session.picker.free_text, "the tree again")
        picker = t.session.picker
        picker.selected = next(i for i, row in enumerate(picker.rows()) if row.key is not None)
        await t.type(ENTER)  # the first message: another branch point than the current one
        await t.until(lambda: t.session.picker is not picker, "the question")
        await opened(t, "summary")
        t.session.picker.selected = 2  # with instructions
        await t.type(ENTER)
        await t.until(lambda: t.session.picker.free_text, "the instructions")
        await opened(t, "instructions")
        t.session.close_picker()

    run_terminal(agent, scenario, keymap=KeyMap.load(keybindings))
    # Pi's tree over the same session, editing a label.
    request = {"sessionFile": str(agent.session_file), "bindings": bindings, "width": 200}
    steps = run_pi_script(TREE_SCRIPT, json.dumps({**request, "keys": ["L"]}))["steps"]
    hints["pi label"] = pi_line(steps[1]["lines"], "save")
    return hints


def pi_line(lines: list[str], words: str) -> str:
    return next(line.strip() for line in lines if words in line)


@pytest.mark.pi
@pytest.mark.parametrize(("name", "bindings"), [("default", DEFAULT), ("rebound", REBOUND)])
def test_every_picker_s_hint_names_the_keys_bound(
    tmp_path: Path, outside: None, name: str, bindings: dict[str, Any]
) -> None:
    ours = our_hints(tmp_path, bindings)
    pis = run_pi_script(SCRIPT, json.dumps({"bindings": bindings, "cwd": str(tmp_path)}))
    # Pi's own dialogs, drawn with the same keys.
    assert ours["trust"] == pi_line(pis["trust"], "navigate")
    for question in ("summary", "mode", "import"):
        assert ours[question] == pi_line(pis["selector"], "navigate"), question
    # Pi's Shift+Enter arrives as Enter: skipped, as every key a terminal cannot report.
    unreported = "shift+enter/" if name == "default" else ""
    assert unreported in pi_line(pis["editor"], "newline")
    assert ours["instructions"] == pi_line(pis["editor"], "newline").replace(unreported, "")
    assert ours["label"] == ours["pi label"]
    assert ours["key"] == pi_line(pis["prompt"], "to submit")
    assert ours["paste"] == pi_line(pis["manual"], "to cancel")
    assert ours["share"] == pi_line(pis["loader"], "cancel")
    # The pickers Pi has no such line for.
    choose, close, move = WRITTEN[name]
    assert ours["fork"] == f"{move} move · {choose} fork · {close} cancel"
    assert ours["settings"] == f"{move} move · {choose} next value · {close} close"
    assert ours["login"] == f"{move} move · type to filter · {choose} choose · {close} cancel"
    # Pi's selector checks Ctrl+S by name, whatever keybindings.json binds.
    assert ours["model"] == f"{choose} to select · ctrl+s to set as default · {close} to cancel"
    assert ours["tree"].startswith(f"{move} move · ")
    assert ours["tree"].endswith(f" · {choose} go · {close} cancel")
