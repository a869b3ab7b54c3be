"""Mistral and Azure OpenAI beyond the shared cases: Mistral's error texts and its single
attempt, harness messages in Mistral's system message, foreign tool-call ids made Mistral's
consistently; where Azure requests go."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest
from support.wire_server import Reply, WireServer

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis import mistral_conversations
from ctxmodes.providers.apis.azure_openai_responses.request import responses_url
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions, WireError

MISTRAL = "mistral/mistral-small-latest"


def _mistral(handler: Any, messages: list[dict[str, Any]]) -> dict[str, Any]:
    model = ModelCatalog(builtin_models()).get(MISTRAL)
    call = CallContext(
        seam=HttpSeam(transport=httpx.MockTransport(handler)), signal=AbortController().signal
    )
    options = StreamOptions(api_key="key", session_id="s-1", max_retries=3)
    return mistral_conversations.stream(model, PiContext("Be brief.", messages), options, call)


def _done(text: str) -> httpx.Response:
    chunk = {
        "id": "c",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}],
    }
    body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


def test_an_error_answer_is_mistrals_text_and_is_not_retried() -> None:
    attempts = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        return httpx.Response(429, text='{"message":"Requests rate limit exceeded"}')

    message = _mistral(handler, [{"role": "user", "content": "hi", "timestamp": 1}])
    assert len(attempts) == 1
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (
        'Mistral API error (429): {"message":"Requests rate limit exceeded"}'
    )


def test_harness_messages_join_the_system_message_and_foreign_ids_are_mistrals() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return _done("ok")

    foreign_id = "call_abc|fc_0123456789"
    history = [
        {"role": "user", "content": "list", "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": foreign_id, "name": "ls", "arguments": {}}],
            "api": "openai-responses",
            "provider": "openai",
            "model": "gpt-5.1",
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": foreign_id,
            "toolName": "ls",
            "content": [{"type": "text", "text": "a.txt"}],
            "isError": False,
            "timestamp": 3,
        },
        {"role": "developer", "content": [{"type": "text", "text": "Window 2 begins."}]},
        {"role": "user", "content": "and now?", "timestamp": 4},
    ]
    message = _mistral(handler, history)
    assert message["stopReason"] == "stop"
    roles = [m["role"] for m in sent[0]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert sent[0]["messages"][0]["content"] == "Be brief.\n\nWindow 2 begins."
    call_id = sent[0]["messages"][2]["tool_calls"][0]["id"]
    assert len(call_id) == 9
    assert call_id.isalnum()
    assert sent[0]["messages"][3]["tool_call_id"] == call_id


@pytest.mark.parametrize(
    ("env", "url"),
    [
        (
            {"AZURE_OPENAI_RESOURCE_NAME": "team"},
            "https://team.openai.azure.com/openai/v1/responses?api-version=v1",
        ),
        (
            {"AZURE_OPENAI_BASE_URL": "https://team.cognitiveservices.azure.com/"},
            "https://team.cognitiveservices.azure.com/openai/v1/responses?api-version=v1",
        ),
        (
            {
                "AZURE_OPENAI_BASE_URL": "https://team.openai.azure.com/openai/v1/responses",
                "AZURE_OPENAI_API_VERSION": "2025-04-01-preview",
            },
            "https://team.openai.azure.com/openai/v1/responses?api-version=2025-04-01-preview",
        ),
        (
            {"AZURE_OPENAI_BASE_URL": "https://proxy.example/azure"},
            "https://proxy.example/azure/responses?api-version=v1",
        ),
    ],
)
def test_where_azure_requests_go(
    env: dict[str, str], url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_RESOURCE_NAME", "AZURE_OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    model = ModelCatalog(builtin_models()).get("azure-openai-responses/gpt-5.1")
    assert responses_url(model, env) == url


def test_azure_without_an_endpoint_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_RESOURCE_NAME"):
        monkeypatch.delenv(name, raising=False)
    model = ModelCatalog(builtin_models()).get("azure-openai-responses/gpt-5.1")
    with pytest.raises(WireError, match="Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME"):
        responses_url(model, {})


def test_mistral_events_are_read_as_pis_reader_reads_them() -> None:
    from ctxmodes.providers.apis.mistral_conversations.stream import event_batches

    stream = ['data: {"a":1}\r\n\r\nevent: x\ndata: {"b":', '2}\n\n: comment\n\ndata: {"c":3}']
    assert list(event_batches(stream)) == [['{"a":1}'], ['{"b":2}'], ['{"c":3}']]
    assert list(event_batches(['data: {"a":1}\n\ndata: [DONE]\n\ndata: {"late":1}\n\n'])) == [
        ['{"a":1}']
    ]
    # Every blank-line spelling Pi's reader knows ends an event, one split across pieces too.
    pieces = ["data: 1\r\rdata: 2\n\rdata: 3\r\n\r", "\ndata: 4\n", "\ndata: 5"]
    assert [data for batch in event_batches(pieces) for data in batch] == ["1", "2", "3", "4", "5"]


def _mistral_over(base_url: str, seam: HttpSeam) -> dict[str, Any]:
    model = ModelCatalog(builtin_models()).get(MISTRAL).model_copy(update={"base_url": base_url})
    call = CallContext(seam=seam, signal=AbortController().signal)
    context = PiContext("Be brief.", [{"role": "user", "content": "hi", "timestamp": 1}])
    return mistral_conversations.stream(model, context, StreamOptions(api_key="key"), call)


def _answer(text: str) -> bytes:
    chunk = {"id": "c", "choices": [{"index": 0, "delta": {"content": text}}]}
    end = {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode()


def test_a_mistral_answer_read_to_done_leaves_its_connection_for_the_next_call() -> None:
    seam = HttpSeam()
    with WireServer([Reply([_answer("one")]), Reply([_answer("two")])]) as server:
        first = _mistral_over(server.base_url, seam)
        second = _mistral_over(server.base_url, seam)
    seam.close()
    assert [first["content"], second["content"]] == [
        [{"type": "text", "text": "one"}],
        [{"type": "text", "text": "two"}],
    ]
    assert server.requests[0]["peer"] == server.requests[1]["peer"]


def test_a_server_that_lingers_after_done_costs_its_connection_not_the_answer() -> None:
    seam = HttpSeam()
    lingering = Reply([_answer("one"), b"data: late\n\n"], behaviour="hold", cut_after=1)
    with WireServer([lingering, Reply([_answer("two")])]) as server:
        started = time.monotonic()
        first = _mistral_over(server.base_url, seam)
        elapsed = time.monotonic() - started
        second = _mistral_over(server.base_url, seam)
    seam.close()
    assert first["stopReason"] == "stop"
    assert first["content"] == [{"type": "text", "text": "one"}]
    assert elapsed < 5  # the server holds the body open for 30 s
    assert second["stopReason"] == "stop"
    assert server.requests[0]["peer"] != server.requests[1]["peer"]


def test_mistral_names_the_address_it_could_not_reach() -> None:
    """Pi's bare ``fetch failed`` leaves a user guessing which endpoint is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = _mistral_over(f"http://127.0.0.1:{port}", HttpSeam())
    assert refused["errorMessage"] == (
        f"Could not connect to http://127.0.0.1:{port}/v1/chat/completions: "
        "connection refused (is the server running?)"
    )
    unknown = _mistral_over("http://no-such-host.invalid", HttpSeam())
    assert unknown["errorMessage"].startswith(
        "fetch failed: could not reach http://no-such-host.invalid/v1/chat/completions ("
    )
