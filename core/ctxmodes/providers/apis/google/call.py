"""One Gemini call as both Google formats make it: the request over ``@google/genai``'s
headers, pi-ai's retry wrapper (which sees no ``Retry-After``: the SDK's errors carry no
headers), the SDK's error texts, and the stream loop."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import httpx
import orjson

from ctxmodes.providers.apis.google.stream import GenerateStream, chunks
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import stringify
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.retry import open_stream
from ctxmodes.providers.wire import ABORTED, JsonObject, PiMessage, StreamOptions, WireError

#: The ``@google/genai`` release whose requests these are.
SDK_VERSION = "1.52.0"
#: Where the SDK's ``x-goog-api-client`` names the runtime, ctxmodes names its own.
API_CLIENT = f"google-genai-sdk/{SDK_VERSION} gl-python"
#: What Node's fetch reports for a request that never got an answer.
FETCH_FAILED = "fetch failed"


def sdk_headers(
    model: ModelSpec, options: StreamOptions, user_agent: str, auth: Mapping[str, str]
) -> dict[str, str]:
    """The SDK's headers: its defaults, Pi's user agent, the model's and the caller's (a
    ``None`` value drops one), then the credentials."""
    merged: dict[str, str | None] = {"User-Agent": user_agent, **(model.headers or {})}
    merged.update(options.headers)
    headers: dict[str, str] = {
        "User-Agent": f"google-genai-sdk/{SDK_VERSION}",
        "x-goog-api-client": API_CLIENT,
        "Content-Type": "application/json",
    }
    for name, value in merged.items():
        if value is None:
            continue
        existing = next((key for key in headers if key.lower() == name.lower()), None)
        if existing is not None and existing != name:
            # The SDK appends a second spelling of a header to the first.
            headers[existing] = f"{headers[existing]}, {value}"
        else:
            headers[name] = value
    for name, value in auth.items():
        if not any(key.lower() == name.lower() for key in headers):
            headers[name] = value
    return headers


def status_message(response: httpx.Response, body: str) -> str:
    """``@google/genai``'s ``ApiError`` message: a JSON error body as JSON text; any other
    body wrapped in an error object with the status and its reason."""
    if "application/json" in response.headers.get("content-type", ""):
        try:
            return stringify(orjson.loads(body))
        except orjson.JSONDecodeError as error:
            # Where the SDK's own JSON parse throws, its message is the parser's.
            return f"invalid JSON in the error answer ({error})"
    wrapped = {
        "error": {
            "message": body,
            "code": response.status_code,
            "status": response.reason_phrase,
        }
    }
    return stringify(wrapped)


def run(
    model: ModelSpec,
    url: str,
    headers: dict[str, str],
    body: JsonObject,
    options: StreamOptions,
    call: CallContext,
    output: PiMessage,
    *,
    label: str,
) -> None:
    """Send, read the stream into ``output``, and fail as pi-ai does.

    :param label: how the stream names the vendor in "ended without a finish reason".
    """
    client = call.client(options.timeout_ms)
    request = client.build_request("POST", url, headers=headers, content=call.encode(body))
    response = open_stream(
        client,
        request,
        call.signal,
        status_message=status_message,
        max_retries=options.max_retries,
        max_retry_delay_ms=options.max_retry_delay_ms,
        on_retry=call.on_retry,
        server_delays=False,
        connection_error=FETCH_FAILED,
        retry_connection_errors=False,
    )
    call.started()
    reader = GenerateStream(model, output, call.emit, call.now_ms)
    with contextlib.closing(response):
        for chunk in call.guard(chunks(response), call.signal):
            reader.feed(chunk)
    reader.finish()
    if call.signal.aborted:
        raise WireError(ABORTED)
    if output["stopReason"] == "pending":
        raise WireError(f"{label} stream ended without a finish reason")
    if output["stopReason"] in ("aborted", "error"):
        raw = output.get("rawStopReason")
        raise WireError(f"Provider stopped with: {raw}" if raw else "An unknown error occurred")
