"""Credentials never reach a trace, a log or an error message."""

from __future__ import annotations

import logging

import httpx
import orjson
import pytest

from ctxmodes.abort import AbortController
from ctxmodes.host.trace import request_json
from ctxmodes.providers.base import ModelRequest, ProviderError, StreamError
from ctxmodes.providers.builtin import default_model_provider
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.secrets import REDACTED, redact_headers, scrub
from ctxmodes.session.models import UserMessage

KEY = "sk-proj-very-secret-0123456789"


def test_trace_redacts_credential_headers_and_keeps_the_rest() -> None:
    request = ModelRequest(
        system_prompt="s",
        messages=[],
        headers={
            "Authorization": f"Bearer {KEY}",
            "x-api-key": KEY,
            "chatgpt-session-token": KEY,
            "x-codex-window-id": "w-1",
        },
    )
    line = orjson.dumps(request_json(request, "openai-responses")).decode()
    assert KEY not in line
    traced = request_json(request, "openai-responses")["headers"]
    assert traced == {
        "Authorization": REDACTED,
        "x-api-key": REDACTED,
        "chatgpt-session-token": REDACTED,
        "x-codex-window-id": "w-1",
    }


def test_redaction_helpers() -> None:
    assert redact_headers({"Cookie": "a=b", "accept": "x", "X-Token": None}) == {
        "Cookie": REDACTED,
        "accept": "x",
        "X-Token": None,
    }
    assert scrub(f"Incorrect API key provided: {KEY}.", [KEY, None]) == (
        f"Incorrect API key provided: {REDACTED}."
    )
    assert scrub("no secrets here", ["short"]) == "no secrets here"


def _provider(answer: httpx.Response, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = ModelCatalog(builtin_models()).get("openai/gpt-5.1")
    seam = HttpSeam(transport=httpx.MockTransport(lambda request: answer))
    return default_model_provider(model, seam=seam)


def test_a_key_echoed_by_the_server_never_reaches_the_stored_error_or_a_log(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    body = {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}}
    provider = _provider(httpx.Response(401, json=body), monkeypatch)
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    with caplog.at_level(logging.DEBUG):
        (event,) = list(provider.stream(request, AbortController().signal))
    assert isinstance(event, StreamError)
    assert event.message.error_message is not None
    assert "Incorrect API key provided" in event.message.error_message
    assert KEY not in event.message.error_message
    assert KEY not in caplog.text
    # A refused key says what to do, beside the provider's own words.
    assert event.hint == (
        "openai refused the credentials: set OPENAI_API_KEY, or run `ctxmodes login openai`"
    )


def test_a_missing_key_error_names_what_to_do_without_any_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    model = ModelCatalog(builtin_models()).get("openai/gpt-5.1")
    provider = default_model_provider(model, seam=HttpSeam())
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        list(provider.stream(request, AbortController().signal))
