"""``ctxmodes auth``, judged against Pi's ``pi auth`` on the same credentials: what each
prints, its exit status, and the words of each error."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import CTXMODES
from support.pi_print import pi_command
from support.token_server import TokenServer

from ctxmodes.providers import anthropic_oauth

pytestmark = pytest.mark.slow  # each case runs Pi and ctxmodes as processes

FAR = 4_102_444_800_000  # 2100: a token that does not expire
KEY = {"type": "api_key", "key": "sk-stored"}
LOGIN = {"type": "oauth", "access": "at-stored", "refresh": "rt-stored", "expires": FAR}

CASES: dict[str, tuple[dict[str, Any], dict[str, str], list[str]]] = {
    "nothing": ({}, {}, ["check", "--provider", "anthropic", "--json"]),
    "a variable": ({}, {"ANTHROPIC_API_KEY": "sk-env"}, ["check", "--provider", "anthropic"]),
    "a pattern's provider": (
        {},
        {"ANTHROPIC_API_KEY": "sk-env"},
        ["check", "--model", "sonnet", "--json"],
    ),
    "a model's credential": (
        {},
        {"ANTHROPIC_API_KEY": "sk-env"},
        ["check", "--model", "anthropic/claude-sonnet-4-5", "--json", "--credentials"],
    ),
    "a stored key": ({"anthropic": KEY}, {}, ["check", "--provider", "anthropic", "--credentials"]),
    "a stored key printed": ({"anthropic": KEY}, {}, ["print-api-key", "--provider", "anthropic"]),
    "a variable printed": (
        {},
        {"OPENAI_API_KEY": "sk-openai"},
        ["print-api-key", "--provider", "openai"],
    ),
    "an unknown provider": ({}, {}, ["check", "--provider", "nope", "--json"]),
    "an unknown provider printed": ({}, {}, ["print-api-key", "--provider", "nope"]),
    "a key is no bearer token": (
        {"anthropic": KEY},
        {},
        ["print-bearer-token", "--provider", "anthropic"],
    ),
    "a login's token": (
        {"anthropic": LOGIN},
        {},
        ["print-bearer-token", "--provider", "anthropic"],
    ),
    "a login is no key": ({"anthropic": LOGIN}, {}, ["print-api-key", "--provider", "anthropic"]),
    "a login checked": (
        {"anthropic": LOGIN},
        {},
        ["check", "--provider", "anthropic", "--json", "--credentials"],
    ),
    "a login unrefreshed": (
        {"anthropic": LOGIN},
        {},
        ["check", "--provider", "anthropic", "--json", "--credentials", "--no-refresh"],
    ),
    "a bearer variable": (
        {},
        {"ANTHROPIC_AUTH_TOKEN": "tok"},
        ["check", "--provider", "anthropic", "--json", "--credentials"],
    ),
    "no model": ({"anthropic": KEY}, {}, ["print-api-key", "--model", "no-such-model-anywhere"]),
    "the one provider that serves it": (
        {"anthropic": KEY, "openai": {"type": "api_key", "key": "sk-openai-stored"}},
        {},
        ["print-api-key", "--model", "gpt-4o"],
    ),
    "several providers serve it": (
        {
            "openai": {"type": "api_key", "key": "sk-openai-stored"},
            "openrouter": {"type": "api_key", "key": "sk-or-stored"},
        },
        {},
        ["print-api-key", "--model", "gpt-4o"],
    ),
    "a provider that cannot be checked by model": (
        {},
        {},
        ["check", "--model", "no-such-model-anywhere", "--json"],
    ),
    "no provider to check": ({}, {}, ["check", "--json"]),
    "an id the provider's catalog lacks": (
        {"anthropic": KEY},
        {},
        ["check", "--provider", "anthropic", "--model", "no-such-model-anywhere", "--json"],
    ),
    "an id the provider's catalog lacks printed": (
        {"anthropic": KEY},
        {},
        ["print-api-key", "--provider", "anthropic", "--model", "no-such-model-anywhere"],
    ),
    "no provider to print": ({}, {}, ["print-api-key"]),
    "an AWS profile": (
        {},
        {"AWS_PROFILE": "dev"},
        ["check", "--provider", "amazon-bedrock", "--json", "--credentials"],
    ),
}


def _run(command: list[str], tmp_path: Path, stored: dict[str, Any], env: dict[str, str]) -> Any:
    """``command`` with ``stored`` as Pi's ``auth.json``, ``env`` as the only credentials."""
    home = tmp_path / "home"
    agent = home / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "auth.json").write_text(json.dumps(stored))
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "PI_CODING_AGENT_DIR": str(agent),
        "CTXMODES_CONFIG_DIR": str(home / "config"),
        "PI_OFFLINE": "1",
        **env,
    }
    return subprocess.run(
        command, capture_output=True, text=True, env=environment, cwd=home, timeout=120
    )


def _said(stderr: str, prefix: str) -> list[str]:
    return [line.removeprefix(prefix) for line in stderr.splitlines() if line.startswith(prefix)]


@pytest.mark.pi
@pytest.mark.parametrize("case", sorted(CASES))
def test_auth_prints_and_exits_as_pi_s(tmp_path: Path, case: str) -> None:
    stored, env, argv = CASES[case]
    pi, _ = pi_command(tmp_path / "unused")
    theirs = _run([*pi, "auth", *argv], tmp_path / "pi", stored, env)
    ours = _run([*CTXMODES, "auth", *argv], tmp_path / "ours", stored, env)
    assert (ours.stdout, ours.returncode) == (theirs.stdout, theirs.returncode), ours.stderr
    assert _said(ours.stderr, "ctxmodes: error: ") == _said(theirs.stderr, "Error: ")


@pytest.mark.parametrize("stored", [KEY, LOGIN])
def test_a_check_prints_no_credential_unless_asked(tmp_path: Path, stored: Any) -> None:
    secret = stored.get("key") or stored["access"]
    for argv in (["check", "--provider", "anthropic"], ["check", "--model", "nope", "--json"]):
        result = _run([*CTXMODES, "auth", *argv], tmp_path, {"anthropic": stored}, {})
        assert secret not in result.stdout + result.stderr
    # A key is refused as a bearer token, and a login as a key, without showing either.
    for argv in (["print-api-key"], ["print-bearer-token"]):
        refused = _run(
            [*CTXMODES, "auth", *argv, "--provider", "anthropic"],
            tmp_path,
            {"anthropic": stored},
            {},
        )
        if refused.returncode:
            assert secret not in refused.stdout + refused.stderr
        else:
            assert refused.stdout == f"{secret}\n"


def test_check_reads_a_model_as_model_does(tmp_path: Path) -> None:
    """An id several providers serve is the one with credentials, as ``--model`` finds it
    (Pi's check, which looks at no credentials to decide, answers ``invalid``)."""
    argv = ["check", "--model", "claude-sonnet-4-5", "--json"]
    ours = _run([*CTXMODES, "auth", *argv], tmp_path, {}, {"ANTHROPIC_API_KEY": "sk-env"})
    assert (ours.returncode, json.loads(ours.stdout)) == (
        0,
        {"status": "ready", "provider": "anthropic", "authType": "api_key"},
    )


def test_a_token_due_within_the_asked_margin_is_renewed_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A token valid for ten more minutes is printed as it is by default (print-api-key's
    five) but renewed for a bearer token, whose margin is 30 minutes, and for --min-expiry
    beyond its life; the renewed login is stored."""
    import time

    ten_minutes = int(time.time() * 1000) + 10 * 60 * 1000
    login = {**LOGIN, "expires": ten_minutes}
    with TokenServer(first_refresh="rt-stored") as tokens:
        env = {anthropic_oauth.TOKEN_BASE_ENV: tokens.base_url}
        config = tmp_path / "home" / "config"
        config.mkdir(parents=True)
        (config / "auth.json").write_text(json.dumps({"anthropic": login}))
        unrefreshed = ["check", "--provider", "anthropic", "--credentials", "--no-refresh"]
        kept = _run([*CTXMODES, "auth", *unrefreshed], tmp_path, {}, env)
        assert (kept.stdout, kept.returncode) == ("at-stored\n", 0), kept.stderr
        short = ["print-bearer-token", "--provider", "anthropic", "--min-expiry", "5m"]
        kept = _run([*CTXMODES, "auth", *short], tmp_path, {}, env)
        assert (kept.stdout, kept.returncode) == ("at-stored\n", 0), kept.stderr
        renewed = _run(
            [*CTXMODES, "auth", "print-bearer-token", "--provider", "anthropic"],
            tmp_path,
            {},
            env,
        )
    assert renewed.returncode == 0, renewed.stderr
    token = renewed.stdout.strip()
    assert token not in ("", "at-stored")
    assert json.loads((config / "auth.json").read_text())["anthropic"]["access"] == token


@pytest.mark.parametrize("given", ["30", "1d", "m5", ""])
def test_a_min_expiry_that_is_no_duration_is_refused(tmp_path: Path, given: str) -> None:
    argv = ["print-bearer-token", "--provider", "anthropic", "--min-expiry", given]
    result = _run([*CTXMODES, "auth", *argv], tmp_path, {"anthropic": LOGIN}, {})
    assert result.returncode == 2
    assert result.stdout == ""
    assert "--min-expiry must use a duration such as 30m or 1h" in result.stderr
