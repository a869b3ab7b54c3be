"""Requests the way pi-ai makes them through the OpenAI SDK (Responses, Chat Completions).

Pi disables the SDK's own retries and retries with its ``retryProviderRequest`` instead;
errors become the SDK's messages, which Pi then formats. This module reproduces both over
httpx, and reads server-sent events the way the SDK's stream does: one JSON object per
``data:``, ``[DONE]`` ends the stream, and an object with a truthy ``error`` fails it with
that error's message.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
import orjson

from ctxmodes.abort import AbortSignal
from ctxmodes.providers.call import CallContext, clamp_max_tokens, reasoning_effort
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import stringify
from ctxmodes.providers.sse import iter_events
from ctxmodes.providers.wire import PiContext, StreamOptions, WireError

#: When no ``maxRetryDelayMs`` is given, a server asking for a longer wait fails at once.
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
#: The SDK's message for a request that hit its timeout.
TIMED_OUT = "Request timed out."
#: The error pi-ai raises when the signal fired during a request or a retry wait.
REQUEST_ABORTED = "Request aborted"
#: What Node reports when a connection drops mid-body.
TERMINATED = "terminated"


class RetryableError(WireError):
    """A failure the SDK-level retry may repeat: a status error or a connection error."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        body: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.headers = dict(headers or {})
        self.body = body


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


def format_status_error(status: int, body: str, prefix: str | None) -> str:
    """pi-ai's ``formatProviderError`` of the SDK error for an HTTP error answer."""
    message, error = _status_message(status, body)
    detail = stringify(error) if isinstance(error, dict) and error else None
    if detail is None or detail in message:
        return f"{prefix} ({status}): {message}" if prefix else message
    return f"{prefix} ({status}): {detail}" if prefix else f"{status}: {detail}"


def refused_message(url: str) -> str:
    return f"Could not connect to {url}: connection refused (is the server running?)"


def _refused(error: BaseException) -> bool:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _should_retry(error: RetryableError) -> bool:
    flag = error.headers.get("x-should-retry")
    if flag == "true":
        return True
    if flag == "false":
        return False
    if error.status is None:
        return True
    return error.status in (408, 409, 429) or error.status >= 500


def retry_delay_ms(
    headers: Mapping[str, str],
    retry_index: int,
    max_delay_ms: int | None,
    message: str,
    *,
    now_ms: Callable[[], float],
    jitter: Callable[[], float] = random.random,
) -> float:
    """The wait before the next attempt: the server's ``retry-after(-ms)``, else backoff.

    :raises WireError: the server asked for more than ``max_delay_ms`` (0 means no cap).
    """
    cap = DEFAULT_MAX_RETRY_DELAY_MS if max_delay_ms is None else max_delay_ms
    requested: float | None = None
    if headers.get("retry-after-ms"):
        requested = _float(headers["retry-after-ms"])
    if requested is None and headers.get("retry-after"):
        value = headers["retry-after"]
        seconds = _float(value)
        if seconds is not None:
            requested = seconds * 1000
        else:
            try:
                requested = email.utils.parsedate_to_datetime(value).timestamp() * 1000 - now_ms()
            except (TypeError, ValueError):
                requested = None
    if requested is not None:
        if cap > 0 and requested > cap:
            raise WireError(
                f"Server requested {_ceil(requested / 1000)}s retry delay "
                f"(max: {_ceil(cap / 1000)}s). {message}"
            )
        return float(requested)
    backoff: float = min(0.5 * 2**retry_index, 8) * 1000 * (1 - jitter() * 0.25)
    return backoff


def _float(text: str) -> float | None:
    try:
        return float(text.strip().split()[0])
    except (ValueError, IndexError):
        return None


def _ceil(value: float) -> int:
    whole = int(value)
    return whole if whole == value else whole + (1 if value > 0 else 0)


def open_stream(
    client: httpx.Client,
    request: httpx.Request,
    signal: AbortSignal,
    *,
    max_retries: int | None,
    max_retry_delay_ms: int | None,
    on_retry: Callable[[int, float, str], None] | None = None,
) -> httpx.Response:
    """Send ``request`` until it is accepted, retrying as pi-ai does; the body is unread.

    :raises RetryableError: the last attempt failed (status errors carry Pi's message
        without prefix; the caller formats it).
    :raises WireError: aborted (``Request aborted``) or a retry wait over the cap.
    """
    retries = max_retries or 0
    remaining = retries
    while True:
        try:
            return _send_once(client, request, signal)
        except RetryableError as error:
            if signal.aborted:
                raise WireError(REQUEST_ABORTED) from error
            if remaining <= 0 or not _should_retry(error):
                raise
            retry_index = retries - remaining
            remaining -= 1
            delay = retry_delay_ms(
                error.headers,
                retry_index,
                max_retry_delay_ms,
                str(error),
                now_ms=lambda: time.time() * 1000,
            )
            if on_retry is not None:
                on_retry(retry_index + 1, delay, str(error))
            if signal.wait(max(0.0, delay) / 1000):
                raise WireError(REQUEST_ABORTED) from error


def _send_once(client: httpx.Client, request: httpx.Request, signal: AbortSignal) -> httpx.Response:
    if signal.aborted:
        raise RetryableError(REQUEST_ABORTED)
    try:
        response = client.send(request, stream=True)
    except httpx.TimeoutException as error:
        raise RetryableError(TIMED_OUT) from error
    except httpx.TransportError as error:
        if _refused(error):
            # Nothing listens there (a local server that is not running): retrying cannot
            # help, and the message says where the request went.
            raise WireError(refused_message(str(request.url))) from error
        # Worded as the OpenAI SDK words it (Pi's retry patterns match it), plus the address.
        raise RetryableError(
            f"Connection error: could not reach {request.url} ({error})."
        ) from error
    if response.is_success:
        return response
    try:
        body = response.read().decode("utf-8", "replace")
    except httpx.HTTPError:
        body = ""
    finally:
        response.close()
    message, _ = _status_message(response.status_code, body)
    raise RetryableError(message, response.status_code, response.headers, body)


def iter_sdk_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The JSON events of an SSE body, as the OpenAI SDK's stream yields them.

    :raises WireError: an event carries an ``error`` object, or a data line is not JSON.
    """
    for event in iter_events(response):
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
    one), the bearer key (if any) unless an ``authorization`` was given, JSON in and out."""
    headers = {**defaults, **caller}
    merged = {key: value for key, value in headers.items() if value is not None}
    if api_key and "authorization" not in {key.lower() for key in merged}:
        merged["Authorization"] = f"Bearer {api_key}"
    merged.setdefault("accept", "application/json")
    merged["content-type"] = "application/json"
    return merged


def post_stream(
    call: CallContext,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
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


def stream_simple(
    api: str,
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    body: Callable[[str, str | None, dict[str, Any]], None],
) -> dict[str, Any]:
    """pi-ai's ``streamSimple`` for the SDK-based formats: the key checked before anything
    is sent, the thinking level clamped, ``maxTokens`` fitted into the window, then
    ``body(api_key, effort, output)`` run under the call's lifecycle.

    :raises WireError: no API key (pi-ai throws before streaming; nothing to store).
    """
    from ctxmodes.providers.openai_responses import check_api_key

    api_key = check_api_key(model, options)
    effort = reasoning_effort(model, options.reasoning)
    options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    return call.run(model, api, lambda output: body(api_key, effort, output))
