"""Credentials come from where Pi takes them, in Pi's order, and a corrupt or unusable one
is a clear error that never shows the secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxmodes.providers.auth import AUTHENTICATED, AuthResolver, missing_credentials_hint
from ctxmodes.providers.credentials import CredentialError

NOW = 1_767_225_600_000


def _env(tmp_path: Path, **variables: str) -> dict[str, str]:
    return {
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "CTXMODES_CONFIG_DIR": str(tmp_path / "ctxmodes"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "HOME": str(tmp_path / "home"),
        **variables,
    }


def _store(path: Path, entries: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries))


def _resolver(env: dict[str, str]) -> AuthResolver:
    return AuthResolver(env, now_ms=lambda: NOW)


def test_a_stored_key_beats_the_environment_and_ctxmodes_login_beats_pis(tmp_path: Path) -> None:
    env = _env(tmp_path, GROQ_API_KEY="from-env")
    resolver = _resolver(env)
    auth = resolver.resolve("groq")
    assert auth is not None
    assert (auth.api_key, auth.source) == ("from-env", "GROQ_API_KEY")
    _store(tmp_path / "pi" / "auth.json", {"groq": {"type": "api_key", "key": "from-pi"}})
    auth = resolver.resolve("groq")
    assert auth is not None
    assert auth.api_key == "from-pi"
    assert auth.source == f"API key in {tmp_path / 'pi' / 'auth.json'}"
    _store(tmp_path / "ctxmodes" / "auth.json", {"groq": {"type": "api_key", "key": "mine"}})
    auth = resolver.resolve("groq")
    assert auth is not None
    assert auth.api_key == "mine"


def test_a_configured_key_beats_the_environment_but_not_a_stored_one(tmp_path: Path) -> None:
    env = _env(tmp_path, OPENAI_API_KEY="from-env", PROXY_KEY="configured")
    resolver = _resolver(env)
    auth = resolver.resolve("openai", "$PROXY_KEY")
    assert auth is not None
    assert auth.api_key == "configured"
    _store(tmp_path / "pi" / "auth.json", {"openai": {"type": "api_key", "key": "stored"}})
    auth = resolver.resolve("openai", "$PROXY_KEY")
    assert auth is not None
    assert auth.api_key == "stored"


def test_stored_keys_are_configuration_values_read_with_the_entrys_own_env(
    tmp_path: Path,
) -> None:
    entry = {"type": "api_key", "key": "${PREFIX}-$SUFFIX", "env": {"PREFIX": "scoped"}}
    _store(tmp_path / "pi" / "auth.json", {"mistral": entry})
    env = _env(tmp_path, PREFIX="process", SUFFIX="tail")
    auth = _resolver(env).resolve("mistral")
    assert auth is not None
    assert auth.api_key == "scoped-tail"
    del env["SUFFIX"]
    with pytest.raises(CredentialError) as raised:
        _resolver(env).resolve("mistral")
    assert str(raised.value).endswith("has no value: SUFFIX is not set")


def test_anthropic_variables_in_pis_order(tmp_path: Path) -> None:
    env = _env(tmp_path, ANTHROPIC_API_KEY="api", ANTHROPIC_OAUTH_TOKEN="oauth")
    auth = _resolver(env).resolve("anthropic")
    assert auth is not None
    assert (auth.api_key, auth.source) == ("oauth", "ANTHROPIC_OAUTH_TOKEN")
    env["ANTHROPIC_AUTH_TOKEN"] = "bearer"
    auth = _resolver(env).resolve("anthropic")
    assert auth is not None
    assert auth.api_key is None
    assert dict(auth.headers) == {"Authorization": "Bearer bearer"}


def test_cloud_providers_use_their_ambient_credentials(tmp_path: Path) -> None:
    env = _env(tmp_path)
    resolver = _resolver(env)
    assert resolver.status("amazon-bedrock") is None
    env["AWS_PROFILE"] = "work"
    auth = resolver.resolve("amazon-bedrock")
    assert auth is not None
    assert (auth.api_key, auth.source) == (AUTHENTICATED, "AWS_PROFILE")
    env["AWS_BEARER_TOKEN_BEDROCK"] = "token"
    assert resolver.status("amazon-bedrock") == "AWS_BEARER_TOKEN_BEDROCK"
    adc = tmp_path / "adc.json"
    env.update(GOOGLE_APPLICATION_CREDENTIALS=str(adc), GOOGLE_CLOUD_PROJECT="p")
    env["GOOGLE_CLOUD_LOCATION"] = "us-central1"
    assert resolver.status("google-vertex") is None  # the credentials file does not exist
    adc.write_text("{}")
    assert resolver.status("google-vertex") == "gcloud application default credentials"


def test_cloudflare_needs_its_account_too(tmp_path: Path) -> None:
    env = _env(tmp_path, CLOUDFLARE_API_KEY="cf")
    assert _resolver(env).status("cloudflare-workers-ai") is None
    env["CLOUDFLARE_ACCOUNT_ID"] = "acct"
    assert _resolver(env).status("cloudflare-workers-ai") == "CLOUDFLARE_API_KEY"
    assert _resolver(env).status("cloudflare-ai-gateway") is None


def test_status_runs_no_command_and_resolve_runs_it_once(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = f"!echo x >> {marker}; echo secret-from-a-vault"
    _store(tmp_path / "pi" / "auth.json", {"xai": {"type": "api_key", "key": command}})
    resolver = _resolver(_env(tmp_path))
    assert resolver.status("xai") is not None
    assert not marker.exists()
    for _ in range(2):
        auth = resolver.resolve("xai")
        assert auth is not None
        assert auth.api_key == "secret-from-a-vault"
    assert marker.read_text() == "x\n"


def test_an_entry_pi_would_refuse_is_an_error_naming_the_file(tmp_path: Path) -> None:
    _store(tmp_path / "pi" / "auth.json", {"groq": {"type": "oauth", "access": "a"}})
    with pytest.raises(CredentialError, match="invalid credential for provider 'groq'"):
        _resolver(_env(tmp_path, GROQ_API_KEY="k")).status("groq")


def test_an_expired_token_ctxmodes_cannot_refresh_says_to_log_in_again(tmp_path: Path) -> None:
    entry = {"type": "oauth", "access": "old", "refresh": "r", "expires": NOW - 1}
    _store(tmp_path / "pi" / "auth.json", {"github-copilot": entry})
    with pytest.raises(CredentialError, match=r"github-copilot login .* has expired"):
        _resolver(_env(tmp_path)).resolve("github-copilot")


def test_no_credentials_at_all(tmp_path: Path) -> None:
    resolver = _resolver(_env(tmp_path))
    for provider in ("anthropic", "google", "openrouter", "openai-codex", "my-proxy"):
        assert resolver.status(provider) is None
        assert resolver.resolve(provider) is None
    assert missing_credentials_hint("anthropic") == (
        "set ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY, or run `ctxmodes login anthropic`"
    )


def test_a_key_given_for_the_run_beats_every_other_and_is_never_shown(tmp_path: Path) -> None:
    env = _env(tmp_path, GROQ_API_KEY="from-env", CLOUDFLARE_ACCOUNT_ID="acct")
    _store(tmp_path / "pi" / "auth.json", {"groq": {"type": "api_key", "key": "stored"}})
    runtime = {"groq": "sk-run", "cloudflare-workers-ai": "cf-run"}
    resolver = AuthResolver(env, now_ms=lambda: NOW, runtime_keys=runtime)
    auth = resolver.resolve("groq", "configured-key")
    assert auth is not None
    assert (auth.source, auth.api_key) == ("--api-key", "sk-run")
    assert "sk-run" not in repr(auth)
    assert resolver.status("groq") == "--api-key"
    cloudflare = resolver.resolve("cloudflare-workers-ai")
    assert cloudflare is not None
    assert (cloudflare.api_key, dict(cloudflare.env)) == (
        "cf-run",
        {"CLOUDFLARE_ACCOUNT_ID": "acct"},
    )
    stored = _resolver(env).resolve("groq")  # the process's own run keys: none given here
    assert stored is not None
    assert stored.api_key == "stored"


def test_a_subscription_is_a_login_stored_for_a_subscription_provider_as_pi_tells_it(
    tmp_path: Path,
) -> None:
    resolver = _resolver(_env(tmp_path, ANTHROPIC_API_KEY="k"))
    login = {"type": "oauth", "access": "a", "refresh": "r", "expires": NOW + 60_000}
    # A key, from the environment or stored, is paid per call.
    assert not resolver.bills_subscription("anthropic")
    _store(tmp_path / "pi" / "auth.json", {"anthropic": {"type": "api_key", "key": "k"}})
    assert not resolver.bills_subscription("anthropic")
    _store(
        tmp_path / "ctxmodes" / "auth.json",
        {"anthropic": login, "openai-codex": login, "openrouter": login, "xai": login},
    )
    # Pi's subscription sign-ins; OpenRouter's sign-in buys credits.
    assert [
        provider
        for provider in ("anthropic", "openai-codex", "xai", "openrouter", "groq", "my-proxy")
        if resolver.bills_subscription(provider)
    ] == ["anthropic", "openai-codex", "xai"]
    # Kimi Code's keys are a subscription's, as Pi's footer counts them.
    assert resolver.bills_subscription("kimi-coding")
    (tmp_path / "ctxmodes" / "auth.json").write_text("{not json")
    assert not resolver.bills_subscription("anthropic")
