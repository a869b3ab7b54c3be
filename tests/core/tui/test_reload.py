"""``/reload``: the keys, skills, prompt templates, context files and system prompt read again
while the terminal runs, as Pi's ``/reload`` reads them; refused, in Pi's words, while the
agent works."""

from __future__ import annotations

import json
from pathlib import Path

from support.terminal import ENTER, GatedStream, run_terminal

from ctxmodes.config import Settings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.resources import default_loader
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.reload import RELOADED, WHILE_STREAMING

ALT_O = "\x1bo"


def _agent(tmp_path: Path, project: Path, provider: object = None) -> Agent:
    script = Script.model_validate({"responses": [{"text": "answered"}]})
    return open_agent(
        cwd=project,
        settings=Settings(mode="off", durability="flush"),
        provider=provider if provider is not None else ScriptedProvider(script),
        session_dir=tmp_path / "sessions",
        resources=default_loader(approve=True, agent_dir=tmp_path / "agent"),
    )


def test_changed_files_and_keys_take_effect_without_a_restart(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Old rule.")
    bindings = tmp_path / "keybindings.json"
    bindings.write_text("{}")
    agent = _agent(tmp_path, project)
    seen: dict[str, str] = {}

    async def scenario(t):
        seen["before"] = agent.session.system_prompt
        (project / "AGENTS.md").write_text("New rule.")
        prompts = project / ".pi" / "prompts"
        prompts.mkdir(parents=True)
        (prompts / "review.md").write_text("---\ndescription: Review\n---\nReview $@")
        bindings.write_text(json.dumps({"app.tools.expand": "alt+o"}))
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)
        seen["after"] = agent.session.system_prompt
        # Before any tool output the key expands the start-up header, which names it.
        await t.type(ALT_O)
        await t.printed("alt+o to expand tools")
        await t.type("/rev")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        seen["offered"] = t.session.buffer.complete_state.completions[0].text

    text = run_terminal(agent, scenario, keymap=KeyMap.load(bindings)).text()
    assert "Old rule." in seen["before"]
    assert "New rule." in seen["after"]
    assert "Old rule." not in seen["after"]
    assert "[Prompts]\n  /review" in text
    assert seen["offered"] == "/review "


def test_a_broken_keybindings_file_is_said_and_the_keys_stay_pi_s(tmp_path: Path) -> None:
    bindings = tmp_path / "keybindings.json"
    bindings.write_text("{}")
    agent = _agent(tmp_path, tmp_path)

    async def scenario(t):
        bindings.write_text("{not json")
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)
        await t.type("\x0f")  # Ctrl+O, Pi's default
        await t.printed("ctrl+o to expand tools")

    text = run_terminal(agent, scenario, keymap=KeyMap.load(bindings)).text()
    assert f"{bindings}: cannot be read" in " ".join(text.split())


def test_a_reply_in_progress_is_not_reloaded(tmp_path: Path) -> None:
    script = Script.model_validate({"responses": [{"text": "a slow answer"}]})
    gated = GatedStream(ScriptedProvider(script, chunk_chars=4), hold_after=2)
    agent = _agent(tmp_path, tmp_path, gated)

    async def scenario(t):
        await t.type("hi" + ENTER)
        await t.until(gated.held.is_set, "the reply to start")
        await t.type("/reload" + ENTER)
        await t.printed(WHILE_STREAMING)
        gated.release.set()
        await t.idle()

    text = run_terminal(agent, scenario).text()
    assert RELOADED not in text
