"""The real Pi judges the cycling: for the same ``models.json`` and ``settings.json``, each
step of Ctrl+P, Shift+Ctrl+P and Shift+Tab gives the model and level Pi's ``AgentSession``
gives, and records the same ``model_change`` and ``thinking_level_change`` entries
(``pi_model_cycle.mjs``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import pi_agent_dir
from support.pi_oracle import run_pi_script

from ctxmodes.config import load_settings
from ctxmodes.model_scope import resolve_model_scope
from ctxmodes.providers.auth import models_with_credentials
from ctxmodes.sdk import open_agent
from ctxmodes.sdk.model_cycling import ModelCycler
from ctxmodes.session.models import ModelChangeEntry, ThinkingLevelChangeEntry

SCRIPT = Path(__file__).parents[2] / "support" / "pi_model_cycle.mjs"
ENDPOINT = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions"}
MODELS = {
    "providers": {
        "local": {
            **ENDPOINT,
            "apiKey": "local-key",
            "models": [
                {"id": "plain"},
                {"id": "deep", "reasoning": True},
                {"id": "wide", "reasoning": True, "thinkingLevelMap": {"xhigh": "xhigh"}},
            ],
        },
        # No key: Pi does not count these models as available.
        "dark": {**ENDPOINT, "models": [{"id": "unusable", "reasoning": True}]},
    }
}
START = {"defaultProvider": "local", "defaultModel": "plain"}
ROUND = ["forward", "thinking", "forward", "thinking", "forward", "backward", "backward"]
#: (Pi's settings, scope patterns or None, steps).
CASES: list[tuple[dict[str, Any], list[str] | None, list[str]]] = [
    ({}, None, ROUND),
    ({"defaultThinkingLevel": "high"}, None, [*ROUND, "thinking", "thinking"]),
    ({"modelThinkingLevels": {"local/wide": "xhigh"}}, None, ["backward", "thinking", *ROUND]),
    (
        {"defaultThinkingLevel": "low", "modelThinkingLevels": {"local/deep": "minimal"}},
        ["wide:medium", "dark/*", "deep", "plain"],
        [*ROUND, "forward", "thinking"],
    ),
    ({}, ["wide:xhigh", "deep:off"], ["forward", "forward", "thinking", "backward"]),
    ({}, ["plain", "dark/*"], ["forward", "backward", "thinking"]),
    ({"defaultProvider": "local", "defaultModel": "deep"}, ["local/*"], ["thinking", *ROUND]),
]


def _pi(agent: Path, cwd: Path, patterns: list[str] | None, steps: list[str]) -> Any:
    request = json.dumps({"patterns": patterns, "steps": steps})
    return run_pi_script(SCRIPT, str(agent), str(cwd), request)


def _ours(cwd: Path, patterns: list[str] | None, steps: list[str]) -> Any:
    settings = load_settings(
        cwd=cwd, environ={"CTXMODES_CONFIG_DIR": str(cwd / "no-config")}, trust=lambda _: False
    ).settings
    with open_agent(cwd=cwd, settings=settings, session_dir=cwd / "sessions") as agent:
        scope = ()
        if patterns is not None:
            available = models_with_credentials(agent.models())
            scope = resolve_model_scope(patterns, available).models
        cycler = ModelCycler(agent, scope)
        start = len(agent.session_manager.get_entries())
        results: list[Any] = []
        for step in steps:
            if step == "thinking":
                results.append(cycler.cycle_thinking_level())
                continue
            switched = cycler.cycle_model(step)  # type: ignore[arg-type]
            results.append(
                None if switched is None else [switched.model.ref, switched.thinking_level]
            )
        changes: list[list[str]] = []
        for entry in agent.session_manager.get_entries()[start:]:
            if isinstance(entry, ModelChangeEntry):
                changes.append(["model", f"{entry.provider}/{entry.model_id}"])
            elif isinstance(entry, ThinkingLevelChangeEntry):
                changes.append(["thinking", entry.thinking_level])
    return {"results": results, "changes": changes}


@pytest.mark.pi
@pytest.mark.parametrize(("settings", "patterns", "steps"), CASES)
def test_each_step_gives_and_records_what_pi_s_gives_and_records(
    settings: dict[str, Any],
    patterns: list[str] | None,
    steps: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)
    agent = pi_agent_dir(tmp_path, monkeypatch)
    (agent / "models.json").write_text(json.dumps(MODELS))
    (agent / "settings.json").write_text(json.dumps({**START, **settings}))
    cwd = tmp_path / "project"
    cwd.mkdir()
    assert _ours(cwd, patterns, steps) == _pi(agent, cwd, patterns, steps)
