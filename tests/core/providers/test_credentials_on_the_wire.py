"""What the resolved credentials put on the wire: Anthropic's bearer token as
``Authorization`` (never as a key), a stored credential's own settings (Pi's ``env``)
steering the request, and the key itself never in an error."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from ctxmodes.abort import AbortController
from ctxmodes.providers.base import ModelRequest, ProviderError, StreamError
from ctxmodes.providers.builtin import default_model_provider
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.login import save_api_key
from ctxmodes.session.models import UserMessage


def _send(ref: str, tmp_path: Path) -> tuple[list[httpx.Request], StreamError]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(401, json={"error": {"message": "refused"}})

    model = ModelCatalog(builtin_models()).get(ref)
    provider = default_model_provider(model, seam=HttpSeam(transport=httpx.MockTransport(handler)))
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    events = list(provider.stream(request, AbortController().signal))
    assert isinstance(events[-1], StreamError)
    return seen, events[-1]


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "ctxmodes"))
    return tmp_path


def test_anthropics_auth_token_is_a_bearer_header(
    dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-bearer-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-this-one")
    seen, error = _send("anthropic/claude-sonnet-4-5", dirs)
    assert seen[0].headers["authorization"] == "Bearer tok-bearer-123"
    assert "x-api-key" not in seen[0].headers
    assert "tok-bearer-123" not in str(error.message.error_message)


def test_a_stored_credentials_settings_steer_the_request(dirs: Path) -> None:
    entry = {
        "type": "api_key",
        "key": "azure-stored-key",
        "env": {"AZURE_OPENAI_RESOURCE_NAME": "team-east", "AZURE_OPENAI_API_VERSION": "2025-04"},
    }
    (dirs / "ctxmodes").mkdir()
    (dirs / "ctxmodes" / "auth.json").write_text(json.dumps({"azure-openai-responses": entry}))
    seen, _error = _send("azure-openai-responses/gpt-5.1", dirs)
    assert str(seen[0].url) == (
        "https://team-east.openai.azure.com/openai/v1/responses?api-version=2025-04"
    )
    assert seen[0].headers["api-key"] == "azure-stored-key"


def test_cloudflare_accounts_fill_the_endpoint_and_the_gateway_takes_its_own_header(
    dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf-key-123")
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-9")
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw-3")
    seen, _error = _send("cloudflare-workers-ai/@cf/moonshotai/kimi-k2.6", dirs)
    assert seen[0].url.path.startswith("/client/v4/accounts/acct-9/ai/v1/")
    assert seen[0].headers["authorization"] == "Bearer cf-key-123"
    gateway = next(
        m.ref
        for m in ModelCatalog(builtin_models())
        if m.provider == "cloudflare-ai-gateway" and m.api == "openai-completions"
    )
    seen, _error = _send(gateway, dirs)
    assert seen[0].url.path.startswith("/v1/acct-9/gw-3/")
    assert seen[0].headers["cf-aig-authorization"] == "Bearer cf-key-123"
    assert "authorization" not in seen[0].headers


def _gateway_model(api: str) -> str:
    return next(
        m.ref
        for m in ModelCatalog(builtin_models())
        if m.provider == "cloudflare-ai-gateway" and m.api == api
    )


@pytest.mark.parametrize(
    ("api", "path"),
    [
        ("anthropic-messages", "/v1/acct-7/gw-2/anthropic/v1/messages"),
        ("openai-responses", "/v1/acct-7/gw-2/openai/responses"),
        ("openai-completions", "/v1/acct-7/gw-2/compat/chat/completions"),
    ],
)
def test_a_gateway_login_fills_the_endpoint_of_every_wire_format(
    dirs: Path, monkeypatch: pytest.MonkeyPatch, api: str, path: str
) -> None:
    # Other values in the environment lose to the ones stored with the key (Pi's ``env``).
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-from-env")
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf-env-key")
    save_api_key(
        "cloudflare-ai-gateway",
        "cf-stored-key",
        {"CLOUDFLARE_ACCOUNT_ID": "acct-7", "CLOUDFLARE_GATEWAY_ID": "gw-2"},
    )
    seen, error = _send(_gateway_model(api), dirs)
    assert seen[0].url.host == "gateway.ai.cloudflare.com"
    assert seen[0].url.path == path
    assert seen[0].headers["cf-aig-authorization"] == "Bearer cf-stored-key"
    assert "authorization" not in seen[0].headers
    assert "x-api-key" not in seen[0].headers
    assert "cf-stored-key" not in str(error.message.error_message)


def test_a_stored_key_takes_its_account_from_the_environment(
    dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pi merges per value: a credential holding only the key finds the account outside it.
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-env")
    save_api_key("cloudflare-workers-ai", "cf-stored-key")
    seen, _error = _send("cloudflare-workers-ai/@cf/moonshotai/kimi-k2.6", dirs)
    assert seen[0].url.path == "/client/v4/accounts/acct-env/ai/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer cf-stored-key"


@pytest.mark.parametrize("stored", [True, False])
def test_a_missing_account_or_gateway_is_an_error_and_nothing_is_sent(
    dirs: Path, monkeypatch: pytest.MonkeyPatch, stored: bool
) -> None:
    if stored:
        save_api_key("cloudflare-ai-gateway", "cf-key", {"CLOUDFLARE_ACCOUNT_ID": "acct-7"})
    else:
        monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf-key")
        monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-7")
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    model = ModelCatalog(builtin_models()).get(_gateway_model("openai-responses"))
    provider = default_model_provider(model, seam=HttpSeam(transport=httpx.MockTransport(handler)))
    expected = (
        "Provider is not configured: cloudflare-ai-gateway (CLOUDFLARE_GATEWAY_ID not set); "
        "set CLOUDFLARE_API_KEY and CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_GATEWAY_ID, "
        "or run `ctxmodes login cloudflare-ai-gateway`"
    )
    with pytest.raises(ProviderError) as checked:
        provider.check_credentials()
    assert str(checked.value) == expected
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    with pytest.raises(ProviderError, match="CLOUDFLARE_GATEWAY_ID not set"):
        list(provider.stream(request, AbortController().signal))
    assert seen == []
