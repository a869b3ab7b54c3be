"""``--models`` patterns (Pi's ``enabledModels``) name the models the real Pi's
``resolveModelScopeFromModels`` names, in its order, with its thinking levels and warnings
(``pi_model_scope.mjs``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import PI_PACKAGE, require_node, require_pi_modules

from ctxmodes.model_scope import resolve_model_scope
from ctxmodes.providers.catalog import ModelSpec

SCRIPT = Path(__file__).parents[1] / "support" / "pi_model_scope.mjs"
#: ``provider/id`` and name: dated versions beside aliases, an id on two providers, ids
#: holding ``/`` and ``:``, ids and names differing in case.
CATALOG = [
    ("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5"),
    ("anthropic", "claude-sonnet-4-5-20250929", "Claude Sonnet 4.5 (2025-09-29)"),
    ("anthropic", "claude-haiku-4-5", "Claude Haiku 4.5"),
    ("anthropic", "claude-3-5-haiku-latest", "Claude Haiku 3.5"),
    ("anthropic", "claude-3-5-haiku-20241022", "Claude Haiku 3.5 (old)"),
    ("anthropic", "claude-opus-4-1-20250805", "Claude Opus 4.1"),
    ("anthropic", "claude-opus-4-20250514", "Claude Opus 4"),
    ("openai", "gpt-4o", "GPT-4o"),
    ("openai", "gpt-5", "GPT-5"),
    ("openai", "GPT-5-Codex", "GPT-5 Codex"),
    ("openai", "gpt-5.1", "GPT-5.1"),
    ("github-copilot", "gpt-5", "GPT-5 (Copilot)"),
    ("openrouter", "anthropic/claude-sonnet-4.5", "Anthropic: Claude Sonnet 4.5"),
    ("openrouter", "openai/gpt-oss-120b:exacto", "OpenAI: gpt-oss-120b (exacto)"),
    ("ollama", "qwen3:8b", "qwen3:8b"),
    ("ollama", "qwen3:8b-instruct", ""),
]
PATTERNS: list[list[str]] = [
    ["anthropic/*"],
    ["*sonnet*"],
    ["*sonnet*:high", "gpt-5.1:low"],
    ["openrouter/*"],
    ["openrouter/**", "openrouter/anthropic/*"],
    ["sonnet", "haiku", "opus"],
    ["gpt-5"],
    ["openai/gpt-5:xhigh", "openai/gpt-5", "OPENAI/GPT-5:low"],
    ["qwen3:8b", "qwen3:8b:high", "ollama/qwen3:8b:max"],
    ["openai/gpt-oss-120b:exacto:minimal", "gpt-oss-120b:exacto"],
    ["claude-sonnet-4-5:bogus", "gpt-4o:high:bogus", "gpt-4o:bogus:high"],
    ["claude-sonnet-4-5:high:low"],
    ["nothing-here", "zzz*", "nothing:high", "zzz*:low"],
    ["CLAUDE-HAIKU-4-5", "Anthropic/Claude-Sonnet-4-5", " openai / gpt-4o "],
    ["{openai,github-copilot}/gpt-*", "gpt-?o"],
    ["[ag]*/claude-haiku*", "*:medium"],
    ["Claude Opus", "codex", "haiku 3.5"],
    ["!openai/*"],
    ["claude-3-5-haiku", "claude-opus"],
    ["", "*"],
    ["anthropic/claude-*-4-5*:off", "anthropic/claude-haiku-4-5"],
]


def _catalog() -> list[ModelSpec]:
    return [
        ModelSpec(id=model_id, name=name, api="openai-completions", provider=provider, base_url="")
        for provider, model_id, name in CATALOG
    ]


def _ours(patterns: list[str]) -> dict[str, Any]:
    scope = resolve_model_scope(patterns, _catalog())
    return {
        "models": [[scoped.model.ref, scoped.thinking_level] for scoped in scope.models],
        "warnings": list(scope.warnings),
    }


def _pi(cases: list[list[str]]) -> list[dict[str, Any]]:
    node = require_node()
    modules = require_pi_modules()
    models = [{"provider": p, "id": i, "name": n} for p, i, n in CATALOG]
    request = [{"patterns": patterns, "models": models} for patterns in cases]
    result = subprocess.run(
        [node, str(SCRIPT), str((modules / PI_PACKAGE).parent), json.dumps(request)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    answers: list[dict[str, Any]] = json.loads(result.stdout)
    return answers


@pytest.mark.pi
def test_patterns_name_the_models_pi_names() -> None:
    for patterns, pi in zip(PATTERNS, _pi(PATTERNS), strict=True):
        assert _ours(patterns) == pi, patterns


def test_a_scope_keeps_the_patterns_order_and_each_model_once() -> None:
    scope = resolve_model_scope(["gpt-4o", "openai/*:low", "gpt-4o:high"], _catalog())
    refs = [scoped.model.ref for scoped in scope.models]
    # A glob matches the bare id too: OpenRouter's "openai/…" models are in.
    assert refs == [
        "openai/gpt-4o",
        "openai/gpt-5",
        "openai/GPT-5-Codex",
        "openai/gpt-5.1",
        "openrouter/openai/gpt-oss-120b:exacto",
    ]
    assert [scoped.thinking_level for scoped in scope.models] == [None, *["low"] * 4]
    assert scope.warnings == ()
