"""The Codex provider as the Remote mode reaches it: its backend route, and encrypted tool
outputs, request headers and client metadata on the wire."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from ctxmodes.abort import AbortController
from ctxmodes.host.run_loop import zero_usage
from ctxmodes.providers.backend import BackendAccess
from ctxmodes.providers.base import (
    EncryptedToolOutput,
    ImageContent,
    ModelRequest,
    ProviderError,
    StreamDone,
)
from ctxmodes.providers.builtin import default_model_provider
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.session.models import AssistantMessage, ToolCall, UserMessage

ACCOUNT = "acct-7f3e"


def _jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


TOKEN = _jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT}})

COMPLETED = (
    'data: {"type":"response.output_item.added","output_index":0,'
    '"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}\n\n'
    'data: {"type":"response.output_text.delta","output_index":0,"delta":"ok"}\n\n'
    'data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message",'
    '"id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}\n\n'
    'data: {"type":"response.completed","response":{"id":"r","status":"completed"}}\n\n'
)


def _provider(seam: HttpSeam, token: str | None = TOKEN, base_url: str | None = None) -> Any:
    model = ModelCatalog(builtin_models()).get("openai-codex/gpt-5.5")
    if base_url is not None:
        model = model.model_copy(update={"base_url": base_url})
    provider = default_model_provider(model, seam=seam)
    provider._api_key = lambda: token  # the credential source, as login would supply it
    return provider


def test_codex_provider_routes_backend_calls_with_its_credentials_and_client() -> None:
    seam = HttpSeam(transport=httpx.MockTransport(lambda request: httpx.Response(200)))
    provider = _provider(seam)
    assert isinstance(provider, BackendAccess)
    route = provider.backend_route()
    assert route.base_url == "https://chatgpt.com/backend-api/codex"
    assert route.url("alpha/notes/v2/read_file") == (
        "https://chatgpt.com/backend-api/codex/alpha/notes/v2/read_file"
    )
    assert route.headers["authorization"] == f"Bearer {TOKEN}"
    assert route.headers["chatgpt-account-id"] == ACCOUNT
    assert route.headers["originator"] == "pi"
    assert route.headers["user-agent"].startswith("pi (")
    assert route.client is seam.client(None)
    assert route.client.post(route.url("alpha/history/v2/search")).status_code == 200


def test_a_configured_service_base_is_the_backend_base() -> None:
    provider = _provider(HttpSeam(), base_url="http://127.0.0.1:9/backend-api")
    assert provider.backend_route().base_url == "http://127.0.0.1:9/backend-api/codex"


@pytest.mark.parametrize("token", [None, "not-a-jwt"])
def test_no_usable_token_is_a_provider_error_without_the_token(token: str | None) -> None:
    with pytest.raises(ProviderError) as raised:
        _provider(HttpSeam(), token=token).backend_route()
    assert "not-a-jwt" not in str(raised.value)


def test_encrypted_outputs_headers_and_client_metadata_reach_the_wire() -> None:
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text=COMPLETED, headers={"content-type": "text/event-stream"})

    provider = _provider(HttpSeam(transport=httpx.MockTransport(answer)))
    call = ToolCall(id="call_1|fc_1", name="notes", arguments={"text": "gAAAAquery"})
    assistant = AssistantMessage(
        content=[call],
        api="openai-codex-responses",
        provider="openai-codex",
        model="gpt-5.5",
        usage=zero_usage(),
        stop_reason="toolUse",
        timestamp=2,
    )
    output = EncryptedToolOutput(
        tool_call_id="call_1|fc_1",
        tool_name="notes",
        encrypted_content="gAAAAcipher",
        images=[ImageContent(data="aW1n", mime_type="image/png")],
    )
    request = ModelRequest(
        system_prompt="sys",
        messages=[UserMessage(content="hi", timestamp=1), assistant, output],
        session_id="s-1",
        headers={"x-codex-window-id": "w-1"},
        client_metadata={"x-codex-window-id": "w-1"},
    )
    events = list(provider.stream(request, AbortController().signal))
    assert isinstance(events[-1], StreamDone)
    (wire,) = sent
    assert wire.headers["x-codex-window-id"] == "w-1"
    body = json.loads(wire.content)
    assert body["client_metadata"] == {"x-codex-window-id": "w-1"}
    outputs = [item for item in body["input"] if item.get("type") == "function_call_output"]
    assert outputs == [
        {"type": "function_call_output", "call_id": "call_1", "output": output.output_items()}
    ]
    assert output.output_items()[1]["type"] == "input_image"
    # The encrypted output answers the call: no synthetic "No result provided".
    assert "No result provided" not in wire.content.decode()


def test_a_refused_codex_token_says_how_to_log_in() -> None:
    seam = HttpSeam(transport=httpx.MockTransport(lambda request: httpx.Response(401, text="")))
    provider = _provider(seam)
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    (event,) = list(provider.stream(request, AbortController().signal))
    assert event.message.stop_reason == "error"
    assert "ctxmodes login openai-codex" in (event.hint or "")
