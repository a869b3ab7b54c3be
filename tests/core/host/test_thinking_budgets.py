"""Pi's ``thinkingBudgets`` reach the model: a turn asks for the user's budget of its
level (``xhigh`` thinks with ``high``'s), while a compaction's summary thinks with the
transport's own budgets, as Pi's summaries do (they are not given the setting). Real
loopback HTTP, the real Anthropic Messages transport on a budget-thinking model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import pi_agent_dir
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.config import load_settings
from ctxmodes.errors import ConfigError
from ctxmodes.providers.transport.budget import DEFAULT_THINKING_BUDGETS
from ctxmodes.sdk import open_agent

API = "anthropic-messages"
SUMMARY = "## Goal\nSay hello.\n"


def _settings(tmp_path: Path, base_url: str, config: str = "") -> Any:
    (tmp_path / "user").mkdir(exist_ok=True)
    (tmp_path / "user" / "config.toml").write_text(
        f"{config}\n"
        "[providers.loop]\n"
        f'api = "{API}"\nbase_url = "{base_url}"\napi_key = "sk-ant-loopback"\n'
        'models = [{ id = "m", reasoning = true, max_tokens = 32000 }]\n'
    )
    return load_settings(
        cwd=tmp_path,
        environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "user")},
        cli={"model": "loop/m"},
    ).settings


def _budgets(server: WireServer) -> list[int]:
    return [json.loads(r["body"])["thinking"]["budget_tokens"] for r in server.requests]


def test_a_turn_thinks_with_the_users_budget_and_a_summary_with_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_dir = pi_agent_dir(tmp_path, monkeypatch)
    (agent_dir / "settings.json").write_text(
        json.dumps({"defaultThinkingLevel": "low", "thinkingBudgets": {"low": 3000}})
    )
    # The summary of the history before the kept turn, and of the kept turn's prefix.
    answers = ("Hello.", "Hello again.", SUMMARY, SUMMARY)
    with WireServer([Reply(text_stream(API, text)) for text in answers]) as server:
        config = "[compaction]\nkeep_recent_tokens = 1\n"
        settings = _settings(tmp_path, server.base_url, config)
        with open_agent(cwd=tmp_path, settings=settings, session_dir=tmp_path / "s") as agent:
            agent.prompt("hello")
            agent.prompt("and again")
            agent.compact()
    budgets = _budgets(server)
    assert budgets[:2] == [3000, 3000]
    assert budgets[2:] == [DEFAULT_THINKING_BUDGETS["low"]] * 2
    turn = json.loads(server.requests[0]["body"])
    assert turn["max_tokens"] == 32000  # the model's cap, the budget inside it


def test_ctxmodes_own_budgets_win_and_xhigh_thinks_with_highs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_dir = pi_agent_dir(tmp_path, monkeypatch)
    (agent_dir / "settings.json").write_text(
        json.dumps({"thinkingBudgets": {"high": 9000, "medium": 5000}})
    )
    with WireServer([Reply(text_stream(API, "Hello."))]) as server:
        config = 'thinking_level = "xhigh"\n[thinking_budgets]\nhigh = 7000\n'
        settings = _settings(tmp_path, server.base_url, config)
        assert settings.thinking_budgets.by_level() == {"high": 7000, "medium": 5000}
        with open_agent(cwd=tmp_path, settings=settings, session_dir=tmp_path / "s") as agent:
            agent.prompt("hello")
    assert _budgets(server) == [7000]


@pytest.mark.parametrize(
    ("budgets", "error"),
    [
        ('"big"', "thinkingBudgets: expected an object, got a string"),
        ('{"low": "4k"}', 'thinkingBudgets.low: expected a number, got a string ("4k")'),
        ('{"low": 10.5}', "thinkingBudgets.low: expected a whole number, got 10.5"),
        ('{"medium": -1}', "thinking_budgets.medium: Input should be greater than or equal to 0"),
    ],
)
def test_a_budget_pi_could_not_use_is_one_line_naming_the_file_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budgets: str, error: str
) -> None:
    agent_dir = pi_agent_dir(tmp_path, monkeypatch)
    (agent_dir / "settings.json").write_text(f'{{"thinkingBudgets": {budgets}}}')
    with pytest.raises(ConfigError) as raised:
        load_settings(cwd=tmp_path, environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "user")})
    message = str(raised.value)
    assert str(agent_dir / "settings.json") in message
    assert error in message
    assert "\n" not in message


def test_the_trace_shows_the_budgets_a_request_carries() -> None:
    from ctxmodes.host.trace import request_json
    from ctxmodes.providers.base import ModelRequest

    plain = request_json(ModelRequest(system_prompt="s", messages=[]), API)
    assert "thinking_budgets" not in plain
    request = ModelRequest(system_prompt="s", messages=[], thinking_budgets={"low": 3000})
    assert request_json(request, API)["thinking_budgets"] == {"low": 3000}
