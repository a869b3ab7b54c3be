"""Pi's Ctrl+P / Shift+Ctrl+P and Shift+Tab through the SDK: the models with credentials
in the scope's (or the catalog's) order, wrapping both ways, each switch recorded as
``/model`` records it at the level Pi picks; the thinking levels of the model, wrapping."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.config import Settings
from ctxmodes.errors import CtxmodesError
from ctxmodes.model_scope import resolve_model_scope
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.sdk.model_cycling import ModelCycler
from ctxmodes.session.models import ModelChangeEntry, ThinkingLevelChangeEntry

ENDPOINT = {"api": "openai-completions", "base_url": "http://127.0.0.1:9/v1"}
LOOP = {
    **ENDPOINT,
    "api_key": "sk-loop",
    "models": [
        {"id": "plain"},
        {"id": "deep", "reasoning": True},
        {"id": "wide", "reasoning": True},
    ],
}
#: No credentials: never cycled to, scoped or not.
DARK = {**ENDPOINT, "models": [{"id": "unusable", "reasoning": True}]}


@pytest.fixture(autouse=True)
def _no_other_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the configured endpoints have credentials, whatever the developer's shell has."""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(name)


@pytest.fixture
def agent(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Agent]:
    settings: dict[str, Any] = {
        "mode": "off",
        "durability": "none",
        "model": "loop/plain",
        "providers": {"dark": DARK, "loop": LOOP},
        **getattr(request, "param", {}),
    }
    with open_agent(
        cwd=tmp_path,
        settings=Settings.model_validate(settings),
        session_dir=tmp_path / "sessions",
    ) as opened:
        yield opened


class Recorded:
    """The model and thinking-level changes appended from now on."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent
        self._start = len(agent.session_manager.get_entries())

    def __call__(self) -> list[tuple[str, str]]:
        changes = []
        for entry in self._agent.session_manager.get_entries()[self._start :]:
            if isinstance(entry, ModelChangeEntry):
                changes.append(("model", f"{entry.provider}/{entry.model_id}"))
            elif isinstance(entry, ThinkingLevelChangeEntry):
                changes.append(("thinking", entry.thinking_level))
        return changes


def _current(agent: Agent) -> str:
    model = agent.session.model
    assert model is not None
    return f"{model.provider}/{model.id}"


def _scope(agent: Agent, *patterns: str) -> ModelCycler:
    scope = resolve_model_scope(patterns, agent.models())
    assert scope.warnings == ()
    return ModelCycler(agent, scope.models)


def _cycle(cycler: ModelCycler, *directions: Any) -> list[tuple[str, str]]:
    switched = []
    for direction in directions:
        result = cycler.cycle_model(direction)
        assert result is not None
        switched.append((result.model.ref, result.thinking_level))
    return switched


def test_without_a_scope_the_models_with_credentials_cycle_in_catalog_order(
    agent: Agent,
) -> None:
    recorded = Recorded(agent)
    cycler = ModelCycler(agent)
    # From plain (off: it does not think), the current level carries over.
    steps = _cycle(cycler, "forward", "forward", "forward", "backward")
    assert steps == [
        ("loop/deep", "off"),
        ("loop/wide", "off"),
        ("loop/plain", "off"),
        ("loop/wide", "off"),
    ]
    assert recorded() == [("model", ref) for ref, _ in steps]


@pytest.mark.parametrize(
    "agent", [{"thinking_level": "high", "model_thinking_levels": {"loop/wide": "low"}}],
    indirect=True,
)  # fmt: skip
def test_a_scope_is_cycled_in_its_order_at_the_level_pi_picks(agent: Agent) -> None:
    recorded = Recorded(agent)
    cycler = _scope(agent, "wide", "dark/*", "deep:minimal", "plain")
    steps = _cycle(cycler, "forward", "forward", "forward", "backward", "backward")
    # The pattern's level, else the model's own, else the configured default; clamped.
    assert steps == [
        ("loop/wide", "low"),
        ("loop/deep", "minimal"),
        ("loop/plain", "off"),
        ("loop/deep", "minimal"),
        ("loop/wide", "low"),
    ]
    assert recorded() == [
        ("model", "loop/wide"),
        ("thinking", "low"),
        ("model", "loop/deep"),
        ("thinking", "minimal"),
        ("model", "loop/plain"),
        ("thinking", "off"),
        ("model", "loop/deep"),
        ("thinking", "minimal"),
        ("model", "loop/wide"),
        ("thinking", "low"),
    ]


def test_a_current_model_outside_the_scope_counts_as_its_first(agent: Agent) -> None:
    cycler = _scope(agent, "wide", "deep")
    assert _cycle(cycler, "forward") == [("loop/deep", "off")]
    # Now on deep, outside this scope: as if on plain, so backward is the last one.
    cycler = _scope(agent, "plain", "wide")
    assert _cycle(cycler, "backward") == [("loop/wide", "off")]


def test_one_usable_model_is_no_cycle_and_changes_nothing(agent: Agent) -> None:
    recorded = Recorded(agent)
    assert _scope(agent, "plain", "dark/*").cycle_model() is None
    assert _scope(agent, "dark/unusable").cycle_model("backward") is None
    assert recorded() == []
    assert _current(agent) == "loop/plain"


@pytest.mark.parametrize("agent", [{"model": "loop/deep"}], indirect=True)
def test_the_thinking_level_cycles_through_the_models_levels(agent: Agent) -> None:
    recorded = Recorded(agent)
    cycler = ModelCycler(agent)
    assert agent.thinking_level == "medium"
    levels = [cycler.cycle_thinking_level() for _ in range(4)]
    assert levels == ["high", "off", "minimal", "low"]
    assert recorded() == [("thinking", level) for level in levels]


def test_a_model_that_does_not_think_has_no_level_to_cycle(agent: Agent) -> None:
    recorded = Recorded(agent)
    assert ModelCycler(agent).cycle_thinking_level() is None
    assert (agent.thinking_level, recorded()) == ("off", [])


def test_a_switch_at_a_level_that_is_none_of_pi_s_is_refused_before_anything_changes(
    agent: Agent,
) -> None:
    recorded = Recorded(agent)
    with pytest.raises(CtxmodesError, match="unknown thinking level 'extreme'"):
        agent.switch_model("loop/deep", "extreme")
    assert (_current(agent), recorded()) == ("loop/plain", [])


def test_a_switch_to_a_model_named_with_its_level_takes_that_level(agent: Agent) -> None:
    """``/model loop/deep:low``, as ``--model loop/deep:low``; an explicit level wins."""
    recorded = Recorded(agent)
    agent.switch_model("loop/deep:low")
    assert (_current(agent), agent.thinking_level) == ("loop/deep", "low")
    agent.switch_model("loop/wide:low", "high")
    assert (_current(agent), agent.thinking_level) == ("loop/wide", "high")
    assert recorded() == [
        ("model", "loop/deep"),
        ("thinking", "low"),
        ("model", "loop/wide"),
        ("thinking", "high"),
    ]
