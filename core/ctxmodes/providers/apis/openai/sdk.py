"""Requests the way pi-ai makes them through the OpenAI SDK (Responses, Chat Completions).

Pi disables the SDK's own retries and retries with its ``retryProviderRequest`` instead;
errors become the SDK's messages, which Pi then formats. This module reproduces both over
httpx, and reads server-sent events the way the SDK's stream does: one JSON object per
``data:``, ``[DONE]`` ends the stream, and an object with a truthy ``error`` fails it with
that error's message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpx
import orjson

from ctxmodes.providers.jsvalues import stringify
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.retry import RetryableError, open_stream
from ctxmodes.providers.transport.sse import iter_events
from ctxmodes.providers.wire import JsonObject, StreamOptions, WireError


def _status_message(status: int, body: str) -> tuple[str, Any]:
    """The SDK's ``APIError`` message and the parsed ``error`` object (or None)."""
    try:
        parsed = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if error is not None and isinstance(error, dict) and error.get("message"):
        message = error["message"]
        text = message if isinstance(message, str) else stringify(message)
    elif error:
        text = stringify(error)
    else:
        text = body if parsed is None and body else ""
    return (f"{status} {text}" if text else f"{status} status code (no body)"), error


def status_message(response: httpx.Response, body: str) -> str:
    """The SDK's ``APIError`` message for an error answer."""
    return _status_message(response.status_code, body)[0]


def format_status_error(status: int, body: str, prefix: str | None) -> str:
    """pi-ai's ``formatProviderError`` of the SDK error for an HTTP error answer."""
    message, error = _status_message(status, body)
    detail = stringify(error) if isinstance(error, dict) and error else None
    if detail is None or detail in message:
        return f"{prefix} ({status}): {message}" if prefix else message
    return f"{prefix} ({status}): {detail}" if prefix else f"{status}: {detail}"


def iter_sdk_events(texts: Iterable[str]) -> Iterator[JsonObject]:
    """The JSON events of an SSE body read as ``texts``, as the OpenAI SDK's stream yields
    them (up to ``[DONE]``).

    :raises WireError: an event carries an ``error`` object, or a data line is not JSON.
    """
    for event in iter_events(texts):
        data = event.data
        if data.startswith("[DONE]"):
            return
        if not data:
            continue
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise WireError(f"Could not parse server event as JSON: {error}") from error
        if isinstance(parsed, dict) and parsed.get("error"):
            problem = parsed["error"]
            message = problem.get("message") if isinstance(problem, dict) else None
            raise WireError(message if isinstance(message, str) else stringify(problem))
        yield parsed


def sdk_headers(
    defaults: dict[str, str | None], caller: Mapping[str, str | None], api_key: str
) -> dict[str, str]:
    """The SDK's request headers: ``defaults``, the caller's over them (``None`` removes
    one), the bearer key (if any) unless an ``authorization`` was given or removed (the SDK
    applies the caller's headers after its own), JSON in and out."""
    headers = {**defaults, **caller}
    merged = {key: value for key, value in headers.items() if value is not None}
    if api_key and "authorization" not in {key.lower() for key in headers}:
        merged["Authorization"] = f"Bearer {api_key}"
    merged.setdefault("accept", "application/json")
    merged["content-type"] = "application/json"
    return merged


def post_stream(
    call: CallContext,
    url: str,
    headers: dict[str, str],
    body: JsonObject,
    options: StreamOptions,
    *,
    error_prefix: str | None,
) -> httpx.Response:
    """POST ``body`` and return the accepted streaming response (retried as pi-ai does);
    ``start`` is emitted once it is accepted.

    :raises WireError: an error status (Pi's text, ``error_prefix`` first when given), a
        retry wait over the cap, or the abort.
    """
    client = call.client(options.timeout_ms)
    request = client.build_request("POST", url, headers=headers, content=call.encode(body))
    try:
        response = open_stream(
            client,
            request,
            call.signal,
            status_message=status_message,
            max_retries=options.max_retries,
            max_retry_delay_ms=options.max_retry_delay_ms,
            on_retry=call.on_retry,
        )
    except RetryableError as error:
        if error.status is not None:
            raise WireError(format_status_error(error.status, error.body, error_prefix)) from error
        raise
    call.started()
    return response
