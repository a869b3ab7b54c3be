"""The warning that a Claude subscription pays for the session's Anthropic calls as extra
usage (``terminal.anthropic_extra_usage_warning``, Pi's ``warnings.anthropicExtraUsage``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.agents import make_agent
from support.terminal import ENTER, run_terminal

from ctxmodes.config import Settings, TerminalSettings
from ctxmodes.providers.auth import AuthResolver
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.extra_usage import WARNING, paid_by_subscription

SONNET = "anthropic/claude-sonnet-4-5"
SUBSCRIPTION_TOKEN = "sk-ant-oat01-subscription"
API_KEY = "sk-ant-api03-pay-as-you-go"
WARNED = " ".join(f"Warning: {WARNING}".split())  # as the transcript's flat text has it


@pytest.fixture
def credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No credentials but those a test gives; ctxmodes' own credential file's path."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "config").mkdir()
    return tmp_path / "config" / "auth.json"


def _stored_login(path: Path) -> None:
    login = {"type": "oauth", "access": "at-1", "refresh": "rt-1", "expires": 4_102_444_800_000}
    path.write_text(json.dumps({"anthropic": login}))


@pytest.mark.parametrize(
    ("environ", "stored", "configured", "paid"),
    [
        ({"ANTHROPIC_OAUTH_TOKEN": SUBSCRIPTION_TOKEN}, False, None, True),
        ({"ANTHROPIC_API_KEY": SUBSCRIPTION_TOKEN}, False, None, True),
        ({}, False, SUBSCRIPTION_TOKEN, True),
        ({}, True, None, True),
        ({"ANTHROPIC_API_KEY": API_KEY}, False, None, False),
        ({}, False, None, False),
        # A bearer token is not a key: its kind is the gateway's to tell.
        ({"ANTHROPIC_AUTH_TOKEN": SUBSCRIPTION_TOKEN}, False, None, False),
    ],
)
def test_a_subscription_is_a_stored_login_or_a_subscription_s_token(
    credentials: Path, environ: dict[str, str], stored: bool, configured: str | None, paid: bool
) -> None:
    if stored:
        _stored_login(credentials)
    resolver = AuthResolver({**environ, "CTXMODES_CONFIG_DIR": str(credentials.parent)})
    assert paid_by_subscription("anthropic", configured, resolver) is paid


def test_a_login_file_that_cannot_be_read_is_no_subscription(credentials: Path) -> None:
    credentials.write_text("{not json")
    resolver = AuthResolver({"CTXMODES_CONFIG_DIR": str(credentials.parent)})
    assert paid_by_subscription("anthropic", None, resolver) is False


def _on_sonnet(tmp_path: Path) -> Agent:
    return open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off", durability="flush", model=SONNET),
        session_dir=tmp_path / "sessions",
    )


def test_the_warning_is_shown_once_at_start_and_not_again_after_a_switch(
    tmp_path: Path, credentials: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", SUBSCRIPTION_TOKEN)
    agent = _on_sonnet(tmp_path)

    async def scenario(t):
        await t.printed(WARNED)
        await t.type("/model anthropic/claude-opus-4-5" + ENTER)
        await t.printed("Model: claude-opus-4-5")
        await t.idle()

    text = run_terminal(agent, scenario).flat()
    assert text.count(WARNED) == 1


def test_a_switch_to_a_model_a_login_pays_for_warns_after_it(
    tmp_path: Path, credentials: Path
) -> None:
    _stored_login(credentials)
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.idle()
        seen["before"] = t.flat()
        await t.type(f"/model {SONNET}" + ENTER)
        await t.printed(WARNED)

    seen: dict[str, str] = {}
    text = run_terminal(agent, scenario).flat()
    assert WARNED not in seen["before"]  # the scripted model: nothing to say
    assert text.index(WARNED) > text.index("Model: claude-sonnet-4-5")


@pytest.mark.parametrize("reason", ["an API key", "the setting off"])
def test_no_warning_for_an_api_key_or_with_the_setting_off(
    tmp_path: Path, credentials: Path, monkeypatch: pytest.MonkeyPatch, reason: str
) -> None:
    if reason == "an API key":
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        settings = TerminalSettings()
    else:
        monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", SUBSCRIPTION_TOKEN)
        settings = TerminalSettings(anthropic_extra_usage_warning=False)
    agent = _on_sonnet(tmp_path)

    async def scenario(t):
        await t.idle()
        await t.type("/model anthropic/claude-opus-4-5" + ENTER)
        await t.printed("Model: claude-opus-4-5")
        await t.idle()

    assert "extra usage" not in run_terminal(agent, scenario, settings=settings).text()
