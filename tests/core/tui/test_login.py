"""``/login``, ``/logout`` and the credential marks of ``/model`` in the terminal."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from support.agents import make_agent
from support.terminal import ENTER, run_terminal
from support.token_server import TokenServer

from ctxmodes.providers import anthropic_oauth
from ctxmodes.tui.model_picker import NO_SCOPE_LINE

SECRET = "gsk-typed-not-shown"


@pytest.fixture
def private_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    for name in ("GROQ_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MISTRAL_API_KEY", "m")
    return tmp_path / "config" / "auth.json"


def test_an_api_key_is_typed_as_dots_stored_and_forgotten(
    tmp_path: Path, private_credentials: Path
) -> None:
    agent = make_agent(tmp_path, [])
    shown: dict[str, str] = {}

    async def scenario(t):
        await t.type("/login" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the provider list")
        await t.type("groq · api")
        await t.until(lambda: len(t.session.picker.rows()) == 1, "one row")
        await t.type(ENTER)
        await t.until(lambda: t.session.picker is not None and t.session.picker.secret)
        await t.type(SECRET)
        shown["field"] = "".join(text for _, text in t.session.picker.fragments())
        await t.type(ENTER)
        await t.printed("Stored an API key for groq")
        await t.type("/logout groq" + ENTER)
        await t.printed("Logged out of groq")

    terminal = run_terminal(agent, scenario)
    assert "•" * len(SECRET) in shown["field"]
    assert SECRET not in shown["field"]
    assert SECRET not in terminal.screen.getvalue()
    assert json.loads(private_credentials.read_text()) == {}


def test_model_lists_the_models_with_credentials_and_only_searches_one_without(
    tmp_path: Path, private_credentials: Path
) -> None:
    agent = make_agent(tmp_path, [])
    seen: dict[str, list[str]] = {}

    async def scenario(t):
        await t.type("/model" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        rows = t.session.picker.rows()
        seen["refs"] = [row.key for row in rows]
        seen["marks"] = [row.fragments[-1][1].strip() for row in rows]
        seen["header"] = ["".join(text for _, text in line) for line in t.session.picker.header()]
        await t.type("\x1b")
        await t.until(lambda: t.session.picker is None)
        # As in Pi, a model without credentials is not one /model TEXT switches to: the
        # picker opens with TEXT searched among those with credentials.
        await t.type("/model anthropic/claude-sonnet-4-5" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        seen["searched"] = [t.session.picker.query, *(row.key for row in t.session.picker.rows())]
        await t.type("\x1b")
        await t.until(lambda: t.session.picker is None)
        model = agent.session.model
        seen["model"] = [] if model is None else [model.provider]

    run_terminal(agent, scenario)
    assert seen["searched"] == ["anthropic/claude-sonnet-4-5"]
    assert seen["model"] != ["anthropic"]
    # As in Pi, only the models of providers with credentials, each marked with its source.
    assert seen["refs"]
    assert all(ref.startswith("mistral/") for ref in seen["refs"])
    assert set(seen["marks"]) == {"MISTRAL_API_KEY"}
    assert seen["header"] == [NO_SCOPE_LINE]


def test_claude_subscription_login_by_pasting_the_redirect(
    tmp_path: Path, private_credentials: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXMODES_OAUTH_CALLBACK_PORT", "0")
    monkeypatch.setattr("webbrowser.open", lambda url: True)
    agent = make_agent(tmp_path, [])
    with TokenServer() as tokens:
        monkeypatch.setenv(anthropic_oauth.TOKEN_BASE_ENV, tokens.base_url)

        async def scenario(t):
            await t.type("/login anthropic" + ENTER)
            await t.until(lambda: anthropic_oauth.AUTHORIZE_URL in t.flat(), "the sign-in URL")
            url = next(
                word for word in t.flat().split() if word.startswith(anthropic_oauth.AUTHORIZE_URL)
            )
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
            tokens.challenges["code-1"] = query["code_challenge"]
            await t.until(lambda: t.session.picker is not None, "the paste field")
            await t.type(f"{anthropic_oauth.REDIRECT_URI}?code=code-1&state={query['state']}")
            await t.type(ENTER)
            await t.printed("Logged in to anthropic")

        run_terminal(agent, scenario)
    stored = json.loads(private_credentials.read_text())["anthropic"]
    assert (stored["type"], stored["refresh"]) == ("oauth", "rt-2")


def test_a_session_without_a_model_says_so_and_takes_the_default_of_the_first_login(
    tmp_path: Path, private_credentials: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing has credentials: the terminal still opens, says how to get a model, and a
    login gives the session that provider's default model (Pi's), recorded in the file."""
    from ctxmodes.config import Settings
    from ctxmodes.providers.catalog import default_models
    from ctxmodes.sdk import open_agent
    from ctxmodes.tui.commands import NO_MODEL_AT_START

    monkeypatch.delenv("MISTRAL_API_KEY")
    agent = open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off", durability="flush"),
        session_dir=tmp_path / "sessions",
    )
    assert agent.session.model is None
    expected = f"groq/{default_models()['groq']}"

    async def scenario(t):
        await t.printed(NO_MODEL_AT_START)
        await t.type("/login groq key" + ENTER)
        await t.until(lambda: t.session.picker is not None and t.session.picker.secret)
        await t.type(SECRET + ENTER)
        await t.printed("Stored an API key for groq")
        await t.printed(f"Model: {expected}")
        model = agent.session.model
        seen["model"] = None if model is None else f"{model.provider}/{model.id}"

    seen: dict[str, str | None] = {}
    terminal = run_terminal(agent, scenario)
    assert seen["model"] == expected
    assert SECRET not in terminal.screen.getvalue()


def test_a_login_leaves_the_model_of_a_session_that_has_one(
    tmp_path: Path, private_credentials: Path
) -> None:
    agent = make_agent(tmp_path, [])
    models = [agent.session.model]

    async def scenario(t):
        await t.type("/login groq key" + ENTER)
        await t.until(lambda: t.session.picker is not None and t.session.picker.secret)
        await t.type(SECRET + ENTER)
        await t.printed("Stored an API key for groq")
        await t.idle()
        models.append(agent.session.model)

    terminal = run_terminal(agent, scenario)
    assert models[0] is not None
    assert models[1] == models[0]
    assert "Model: groq/" not in terminal.screen.getvalue()


def test_the_command_lines_startup_warnings_are_shown_under_the_header(
    tmp_path: Path, private_credentials: Path
) -> None:
    """A warning the command line found (a session's model that cannot be used here) is
    shown with the session's own warnings when the terminal opens."""
    agent = make_agent(tmp_path, [])
    warning = "This session last used x/y, which cannot be used here"

    async def scenario(t):
        await t.printed(warning)

    run_terminal(agent, scenario, startup_warnings=[warning])


def test_a_subscription_only_pi_signs_in_to_is_listed_and_says_so(
    tmp_path: Path, private_credentials: Path
) -> None:
    # GitHub Copilot's login is Pi's alone: its row says so, and choosing it tells how,
    # where before the list showed only its API key.
    agent = make_agent(tmp_path, [])
    seen: dict[str, list[str]] = {}

    async def scenario(t):
        await t.type("/login" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the provider list")
        await t.type("github-copilot")
        await t.until(lambda: len(t.session.picker.rows()) == 2, "two rows")
        seen["rows"] = [
            "".join(text for _, text in row.fragments) for row in t.session.picker.rows()
        ]
        await t.type("\x1b[B" + ENTER)  # ↓ to the second row
        await t.printed("Only Pi performs github-copilot's sign-in")

    terminal = run_terminal(agent, scenario)
    assert seen["rows"] == [
        "github-copilot · API key",
        "github-copilot · GitHub Copilot: log in with Pi",
    ]
    assert "log in once with Pi (`pi`, then /login)" in terminal.flat()
    assert not private_credentials.exists()
