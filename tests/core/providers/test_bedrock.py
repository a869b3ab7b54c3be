"""Bedrock beyond the shared cases: SigV4 signatures a server can verify, the AWS SDK's
retries, exception events in the stream, redacted reasoning kept and replayed, harness
messages as system blocks."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.event_stream import event, exception, text_answer

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis.bedrock_converse_stream import stream
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http import HttpSeam
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions

NOVA = "amazon-bedrock/amazon.nova-micro-v1:0"
CLAUDE = "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
ENDPOINT = "https://bedrock-runtime.eu-west-1.amazonaws.com"


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in (
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def _run(
    ref: str,
    handler: Callable[[httpx.Request], httpx.Response],
    *,
    messages: list[dict[str, Any]] | None = None,
    options: StreamOptions | None = None,
    retries: list[tuple[int, float, str]] | None = None,
) -> dict[str, Any]:
    model = ModelCatalog(builtin_models()).get(ref)
    model = model.model_copy(update={"base_url": ENDPOINT})
    context = PiContext(
        system_prompt="Be brief.",
        messages=messages or [{"role": "user", "content": "Hello", "timestamp": 1}],
    )
    call = CallContext(
        seam=HttpSeam(transport=httpx.MockTransport(handler)),
        signal=AbortController().signal,
        on_retry=(lambda *args: retries.append(args)) if retries is not None else None,
    )
    return stream(model, context, options or StreamOptions(timeout_ms=None), call)


def _answer(body: bytes) -> httpx.Response:
    return httpx.Response(
        200,
        content=body,
        headers={"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "r-1"},
    )


@pytest.mark.slow  # loads the vendor SDK's signer
def test_sigv4_signature_covers_what_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return _answer(text_answer("signed"))

    message = _run(NOVA, handler)
    assert message["stopReason"] == "stop"
    (request,) = seen
    assert request.url.host == "bedrock-runtime.eu-west-1.amazonaws.com"
    authorization = request.headers["authorization"]
    assert authorization.startswith(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"
        + request.headers["x-amz-date"][:8]
        + "/eu-west-1/bedrock/aws4_request"
    )
    # A verifier with the secret recomputes the signature from the request as received.
    signed = [
        part.strip() for part in authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    ]
    check = AWSRequest(
        method="POST",
        url=str(request.url),
        data=request.content,
        headers={name: request.headers[name] for name in signed},
    )
    signer = SigV4Auth(
        Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        "bedrock",
        "eu-west-1",
    )
    # The verifier signs at the time the request says it was signed (add_auth takes the
    # clock's time, which may have moved to the next second since).
    import datetime

    import botocore.auth

    signed_at = datetime.datetime.strptime(request.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: signed_at)
    signer.add_auth(check)
    assert check.headers["Authorization"] == authorization


@pytest.mark.slow  # waits out the SDK's retry delays
def test_throttling_is_retried_by_the_sdks_rules_then_fails_after_three_attempts() -> None:
    attempts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request.headers["amz-sdk-request"])
        return httpx.Response(
            429,
            json={"message": "Too many requests, please wait before trying again."},
            headers={
                "x-amzn-errortype": "ThrottlingException:http://internal",
                "x-amzn-requestid": "r-9",
            },
        )

    retries: list[tuple[int, float, str]] = []
    message = _run(
        NOVA, handler, options=StreamOptions(api_key="key", max_retries=0), retries=retries
    )
    assert attempts == ["attempt=1; max=3", "attempt=2; max=3", "attempt=3; max=3"]
    assert [delay <= 500 * 2**n for n, (_, delay, _) in enumerate(retries)] == [True, True]
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (
        "Throttling error: Too many requests, please wait before trying again."
    )
    assert message["diagnostics"][0]["details"] == {
        "status": 429,
        "errorCode": "ThrottlingException",
        "requestId": "r-9",
    }


def test_a_validation_error_is_not_retried() -> None:
    attempts = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        return httpx.Response(
            400,
            json={"message": "prompt is too long"},
            headers={"x-amzn-errortype": "ValidationException"},
        )

    message = _run(NOVA, handler, options=StreamOptions(api_key="key"))
    assert len(attempts) == 1
    assert message["errorMessage"] == "Validation error: prompt is too long"


def test_an_exception_event_mid_stream_keeps_what_streamed() -> None:
    body = b"".join(
        [
            event("messageStart", {"role": "assistant"}),
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Par"}}),
            exception("modelStreamErrorException", "Model stream failed"),
        ]
    )
    message = _run(NOVA, lambda _request: _answer(body), options=StreamOptions(api_key="key"))
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == "Model stream error: Model stream failed"
    assert message["content"] == [{"type": "text", "text": "Par"}]
    assert message["diagnostics"][0]["details"] == {
        "errorCode": "ModelStreamErrorException",
        "requestId": "r-1",
    }


def test_redacted_reasoning_is_kept_as_base64_and_replayed_as_bytes() -> None:
    secret = [b"\x00\x01opaque", b"-reasoning\xff"]
    body = b"".join(
        [
            event("messageStart", {"role": "assistant"}),
            *(
                event(
                    "contentBlockDelta",
                    {
                        "contentBlockIndex": 0,
                        "delta": {
                            "reasoningContent": {"redactedContent": base64.b64encode(c).decode()}
                        },
                    },
                )
                for c in secret
            ),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Done."}}),
            event("contentBlockStop", {"contentBlockIndex": 1}),
            event("messageStop", {"stopReason": "end_turn"}),
        ]
    )
    first = _run(CLAUDE, lambda _request: _answer(body), options=StreamOptions(api_key="key"))
    thinking = first["content"][0]
    assert thinking == {
        "type": "thinking",
        "thinking": "[Reasoning redacted]",
        "thinkingSignature": base64.b64encode(b"".join(secret)).decode(),
        "redacted": True,
    }
    sent: list[dict[str, Any]] = []

    def replay(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return _answer(text_answer("ok"))

    history = [
        {"role": "user", "content": "Hello", "timestamp": 1},
        {**first, "timestamp": 2},
        {"role": "user", "content": "Again", "timestamp": 3},
    ]
    _run(CLAUDE, replay, messages=history, options=StreamOptions(api_key="key"))
    assistant = sent[0]["messages"][1]
    assert assistant["content"][0] == {
        "reasoningContent": {"redactedContent": base64.b64encode(b"".join(secret)).decode()}
    }


def test_harness_messages_become_system_blocks_after_the_cache_point() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return _answer(text_answer("ok"))

    history = [
        {"role": "user", "content": "Hello", "timestamp": 1},
        {"role": "developer", "content": [{"type": "text", "text": "Window 2 begins."}]},
    ]
    _run(CLAUDE, handler, messages=history, options=StreamOptions(api_key="key"))
    body = sent[0]
    assert body["system"] == [
        {"text": "Be brief."},
        {"cachePoint": {"type": "default"}},
        {"text": "Window 2 begins."},
    ]
    assert all("Window 2" not in json.dumps(message) for message in body["messages"])
