"""``ctxmodes login``, ``logout``, ``models`` and a run without credentials, as real processes
with private credential directories."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_process import run_ctxmodes
from support.login_process import login_by_pasting
from support.token_server import TokenServer

from ctxmodes.providers import anthropic_oauth

pytestmark = pytest.mark.slow  # real processes end to end

SECRET = "gsk-do-not-print-me"


def test_an_api_key_is_stored_owner_only_and_never_printed(tmp_path: Path) -> None:
    login = subprocess.run(
        [sys.executable, "-m", "ctxmodes", "login", "groq"],
        input=SECRET + "\n",
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert login.returncode == 0, login.stderr
    assert SECRET not in login.stdout + login.stderr
    path = tmp_path / "config" / "auth.json"
    assert json.loads(path.read_text()) == {"groq": {"type": "api_key", "key": SECRET}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    listed = run_ctxmodes(tmp_path, "models", "--available")
    assert listed.returncode == 0
    refs = [line.split()[0] for line in listed.stdout.splitlines()[1:]]
    assert refs
    assert all(ref.startswith("groq/") for ref in refs)
    assert f"API key in {path}" in listed.stdout
    assert SECRET not in listed.stdout
    logout = run_ctxmodes(tmp_path, "logout", "groq")
    assert "Logged out of groq" in logout.stdout
    assert json.loads(path.read_text()) == {}


def test_models_lists_credentialed_providers_first(tmp_path: Path) -> None:
    listed = run_ctxmodes(tmp_path, "models", env={"MISTRAL_API_KEY": "m"})
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()[1:]
    first_without = next(i for i, line in enumerate(lines) if line.rstrip().endswith(" -"))
    assert all(line.startswith("mistral/") for line in lines[:first_without])
    assert not any(line.startswith("mistral/") for line in lines[first_without:])
    assert "anthropic/claude-sonnet-4-5" in listed.stdout


def test_a_run_without_credentials_is_one_line_and_leaves_no_session(tmp_path: Path) -> None:
    result = run_ctxmodes(
        tmp_path,
        "run",
        "--model",
        "anthropic/claude-sonnet-4-5",
        "hello",
        env={
            "ANTHROPIC_API_KEY": "",
            "ANTHROPIC_OAUTH_TOKEN": "",
            "ANTHROPIC_AUTH_TOKEN": "",
        },
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr == (
        "ctxmodes: error: no credentials for anthropic/claude-sonnet-4-5: set "
        "ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY, or run `ctxmodes login anthropic`\n"
    )
    sessions = tmp_path / "agent" / "sessions"
    assert not sessions.exists() or not any(sessions.rglob("*.jsonl"))


def test_claude_subscription_login_with_a_pasted_redirect(tmp_path: Path) -> None:
    with TokenServer() as tokens:
        env = {
            **_env(tmp_path),
            anthropic_oauth.TOKEN_BASE_ENV: tokens.base_url,
            "CTXMODES_OAUTH_CALLBACK_PORT": "0",
        }
        code, out, err = login_by_pasting(
            "anthropic",
            env,
            tokens,
            anthropic_oauth.AUTHORIZE_URL,
            anthropic_oauth.REDIRECT_URI,
        )
    assert code == 0, err
    assert out.startswith("Logged in to anthropic;")
    stored = json.loads((tmp_path / "config" / "auth.json").read_text())["anthropic"]
    assert (stored["type"], stored["refresh"]) == ("oauth", "rt-2")
    listed = run_ctxmodes(tmp_path, "models", "--provider", "anthropic", "--available")
    assert "OAuth in" in listed.stdout


def _env(tmp_path: Path) -> dict[str, str]:
    import os

    return {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "CTXMODES_CONFIG_DIR": str(tmp_path / "config"),
    }


def test_models_for_a_provider_nobody_knows_is_one_error_line(tmp_path: Path) -> None:
    """A mistyped provider (`--provider antropic`) is an error listing the known ones, not an
    empty table that reads as "this provider has no models"."""
    listed = run_ctxmodes(tmp_path, "models", "--provider", "antropic")
    assert listed.returncode == 1
    assert listed.stdout == ""
    (line,) = listed.stderr.splitlines()
    assert line.startswith("ctxmodes: error: no provider is named 'antropic'; known providers: ")
    assert "anthropic" in line.split("known providers: ")[1].split(", ")
    listed = run_ctxmodes(tmp_path, "models", "--provider", "anthropic")
    assert listed.returncode == 0
    assert "anthropic/claude-sonnet-4-5" in listed.stdout


@pytest.mark.parametrize("command", [("models",), ("run", "--model", "ollama/qwen3", "hi")])
def test_a_models_json_entry_of_the_wrong_kind_is_one_error_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "ollama": {
                        "baseUrl": "http://127.0.0.1:11434/v1",
                        "api": "openai-completions",
                        "models": [{"id": "qwen3", "contextWindow": "32k"}],
                    }
                }
            }
        )
    )
    result = run_ctxmodes(tmp_path, *command)
    assert result.returncode == 1
    assert result.stderr == (
        "ctxmodes: error: models.json: provider ollama, model qwen3: contextWindow: "
        "Input should be a valid integer, unable to parse string as an integer\n"
    )


def test_login_lists_the_variables_each_provider_reads(tmp_path: Path) -> None:
    """`ctxmodes login` is where the docs send a user to find the variable to set."""
    listed = run_ctxmodes(tmp_path, "login", env={"MISTRAL_API_KEY": "m", "OPENAI_API_KEY": ""})
    assert listed.returncode == 0
    header, *rows = listed.stdout.splitlines()
    assert header.split() == ["PROVIDER", "LOGIN", "CREDENTIALS", "OR", "SET"]
    by_provider = {row.split()[0]: row for row in rows}
    assert by_provider["openai"].endswith("  OPENAI_API_KEY")
    assert by_provider["anthropic"].endswith("  ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY")
    assert by_provider["mistral"].endswith("  MISTRAL_API_KEY  MISTRAL_API_KEY")
    assert "AWS_BEARER_TOKEN_BEDROCK" in by_provider["amazon-bedrock"]
    assert "GOOGLE_APPLICATION_CREDENTIALS" in by_provider["google-vertex"]
    assert "m" not in by_provider["mistral"].split()


def test_login_to_a_misspelled_provider_names_the_one_meant(tmp_path: Path) -> None:
    result = run_ctxmodes(tmp_path, "login", "mistrall")
    assert result.returncode == 1
    assert result.stderr == (
        "ctxmodes: error: unknown provider 'mistrall'; did you mean mistral? "
        "`ctxmodes login` lists them\n"
    )
    assert not (tmp_path / "config" / "auth.json").exists()


def test_a_provider_whose_catalog_is_a_live_gateway_says_so(tmp_path: Path) -> None:
    """Pi lists Radius (and `ctxmodes login` offers it), but its models come from the
    gateway at run time: "no provider is named 'radius'" would contradict the login list."""
    listed = run_ctxmodes(tmp_path, "models", "--provider", "radius")
    assert listed.returncode == 1
    assert listed.stderr == (
        "ctxmodes: error: radius has no models here: Pi fetches its catalog from the "
        "provider's gateway, which ctxmodes does not support\n"
    )


@pytest.mark.parametrize("output", [(), ("--json",)])
def test_config_show_prints_no_provider_key(tmp_path: Path, output: tuple[str, ...]) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(
        "[providers.ollama]\n"
        'api = "openai-completions"\n'
        'base_url = "http://127.0.0.1:11434/v1"\n'
        f'api_key = "{SECRET}"\n'
        f'headers = {{ Authorization = "Bearer {SECRET}-2", X-Title = "my-app" }}\n'
        'models = [{ id = "qwen3" }]\n'
    )
    shown = run_ctxmodes(tmp_path, "config", "show", *output)
    assert shown.returncode == 0, shown.stderr
    assert SECRET not in shown.stdout + shown.stderr
    assert "my-app" in shown.stdout
    assert shown.stdout.count("[redacted]") == 2


def test_a_run_with_no_model_and_no_credentials_says_how_to_get_one(tmp_path: Path) -> None:
    """A first run with nothing configured points at the provider models, not only at the
    offline scripted one."""
    result = run_ctxmodes(tmp_path, "run", "hello")
    assert result.returncode == 1
    assert result.stderr == (
        "ctxmodes: error: no model available: set a provider's API key (ANTHROPIC_API_KEY, "
        "OPENAI_API_KEY, ...) or run `ctxmodes login`, or pass --model PROVIDER/MODEL "
        "(`ctxmodes models` lists them) or scripted:FILE\n"
    )


def test_an_unknown_mode_is_said_before_a_missing_model(tmp_path: Path) -> None:
    """A mistyped ``--mode`` is the error a first run meets, not the model it lacks too."""
    result = run_ctxmodes(tmp_path, "run", "--mode", "tre", "hello")
    assert result.returncode == 1
    assert result.stderr.startswith("ctxmodes: error: unknown mode 'tre'; installed modes: ")
    assert result.stderr.count("\n") == 1


def test_pis_default_model_is_the_model_of_a_run_without_one(tmp_path: Path) -> None:
    """Pi's startup model (``defaultProvider``, ``defaultModel``) carries over: ``config
    show`` names it and its file, and a run without ``--model`` takes it."""
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(
        '{"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}'
    )
    shown = run_ctxmodes(tmp_path, "config", "show")
    assert shown.returncode == 0, shown.stderr
    (line,) = [line for line in shown.stdout.splitlines() if line.split()[:1] == ["model"]]
    assert "anthropic/claude-sonnet-4-5" in line
    assert str(tmp_path / "agent" / "settings.json") in line
    ran = run_ctxmodes(tmp_path, "run", "hello")
    assert ran.returncode == 1
    assert "anthropic/claude-sonnet-4-5" in ran.stderr
    assert "ANTHROPIC_API_KEY" in ran.stderr
