"""Pi's Ctrl+P, Alt+P (Shift+Ctrl+P) and Shift+Tab in the terminal: the scope shown at
start, each switch said in Pi's words and shown in the footer, one line where there is
nothing to cycle, and a key pressed while a reply streams switching for the next request."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.terminal import GatedStream, run_terminal

from ctxmodes.config import Settings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.session.models import (
    AssistantMessage,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
)

CTRL_P = "\x10"
ALT_P = "\x1bp"
SHIFT_TAB = "\x1b[Z"
ENTER = "\r"
LOOP = {
    "api": "openai-completions",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key": "sk-loop",
    "models": [
        {"id": "plain", "name": "Plain One"},
        {"id": "deep", "reasoning": True},
        {"id": "wide", "reasoning": True},
    ],
}


@pytest.fixture(autouse=True)
def _no_other_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)


def _agent(tmp_path: Path, model: str = "loop/plain", **options: Any) -> Agent:
    settings = Settings.model_validate(
        {"mode": "off", "durability": "none", "model": model, "providers": {"loop": LOOP}}
    )
    return open_agent(cwd=tmp_path, settings=settings, session_dir=tmp_path / "sessions", **options)


def _changes(agent: Agent) -> list[tuple[str, str]]:
    changes = []
    for entry in agent.session_manager.get_entries():
        if isinstance(entry, ModelChangeEntry):
            changes.append(("model", entry.model_id))
        elif isinstance(entry, ThinkingLevelChangeEntry):
            changes.append(("thinking", entry.thinking_level))
    return changes


def _footer(t: Any) -> str:
    return "".join(text for _, text in t.session.status.fragments())


def test_the_keys_cycle_the_scope_both_ways_and_say_so_as_pi(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    start = _changes(agent)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.printed('Warning: No models match pattern "nope"')
        await t.printed("Model scope: deep:high, plain (Ctrl+P to cycle)")
        await t.type(CTRL_P)
        await t.printed("Switched to deep (thinking: high)")
        await t.until(lambda: "loop/deep" in _footer(t), "the footer to show deep")
        await t.type(SHIFT_TAB)
        await t.printed("Thinking level: off")
        await t.type(ALT_P)
        await t.printed("Switched to Plain One")
        await t.type(SHIFT_TAB)
        await t.printed("Current model does not support thinking")
        seen["footer"] = _footer(t)
        seen["changes"] = _changes(agent)

    run_terminal(agent, scenario, model_patterns=["deep:high", "nope", "plain"])
    assert "loop/plain" in seen["footer"]
    assert seen["changes"][len(start) :] == [
        ("model", "deep"),
        ("thinking", "high"),
        ("thinking", "off"),
        ("model", "plain"),
    ]


def test_with_one_model_in_reach_the_key_is_one_line(tmp_path: Path) -> None:
    agent = _agent(tmp_path)
    start = _changes(agent)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type(CTRL_P)
        await t.printed("Only one model in scope")
        seen["changes"] = _changes(agent)

    run_terminal(agent, scenario, model_patterns=["plain", "elsewhere/*"])
    assert seen["changes"] == start


def test_a_key_pressed_while_a_reply_streams_switches_at_once_as_in_pi(tmp_path: Path) -> None:
    script = Script.model_validate({"responses": [{"text": "a reply that takes its time"}]})
    provider = GatedStream(ScriptedProvider(script, chunk_chars=4), hold_after=3)
    agent = _agent(tmp_path, provider=provider)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("go" + ENTER)
        await t.until(provider.held.is_set, "the reply to be half streamed")
        seen["before"] = _changes(agent)
        await t.type(CTRL_P)
        await t.printed("Switched to deep")
        seen["during"] = agent.session.model.id if agent.session.model else None
        seen["written during"] = _changes(agent)
        provider.release.set()
        await t.idle()
        seen["text"] = t.flat()
        seen["after"] = _changes(agent)
        seen["entries"] = [
            (entry.type, entry.message.role, entry.message.model)
            if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
            else (entry.type,)
            for entry in agent.session_manager.get_entries()
        ]

    run_terminal(agent, scenario)
    # The next request's model at once; the reply under way ends on the model it began on.
    assert seen["during"] == "deep"
    assert "a reply that takes its time" in seen["text"]
    # Written once the run holding the session file is over.
    assert seen["written during"] == seen["before"]
    assert seen["after"][: len(seen["before"]) + 1] == [*seen["before"], ("model", "deep")]
    entries = seen["entries"]
    assert entries[entries.index(("message", "assistant", "scripted")) + 1] == ("model_change",)
