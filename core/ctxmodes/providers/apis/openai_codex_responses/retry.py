"""How the Codex transport opens its stream: its own retries (status and wording decide),
waits, and error texts, which differ from the SDK formats' (``pi-providers.md`` §4)."""

from __future__ import annotations

import math
import re

import httpx
import orjson

from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.retry import (
    DEFAULT_MAX_RETRY_DELAY_MS,
    TIMED_OUT,
    is_refused,
    server_wait_ms,
    unreachable_message,
)
from ctxmodes.providers.wire import ABORTED, HttpStatusError, StreamOptions, WireError

BASE_DELAY_MS = 1000
_TERMINAL_QUOTA = re.compile(
    r"GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance"
    r"|insufficient_quota|out of budget|quota exceeded|billing",
    re.IGNORECASE,
)
_RETRYABLE_TEXT = re.compile(
    r"rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused",
    re.IGNORECASE,
)
_USAGE_LIMIT_CODE = re.compile(
    r"usage_limit_reached|usage_not_included|rate_limit_exceeded", re.IGNORECASE
)


def _retryable(status: int, text: str) -> bool:
    if status == 429 and _TERMINAL_QUOTA.search(text):
        return False
    return status in (429, 500, 502, 503, 504) or bool(_RETRYABLE_TEXT.search(text))


def error_message(status: int, reason: str, text: str, now_ms: float) -> str:
    """Codex's text for an error answer: the usage-limit sentence, the error's message, the
    raw body, or the status text."""
    message = text or reason or "Request failed"
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return message
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not error or not isinstance(error, dict):
        return message
    code = str(error.get("code") or error.get("type") or "")
    friendly = None
    if _USAGE_LIMIT_CODE.search(code) or status == 429:
        plan = f" ({str(error['plan_type']).lower()} plan)" if error.get("plan_type") else ""
        when = ""
        if error.get("resets_at"):
            minutes = max(0, _js_round((error["resets_at"] * 1000 - now_ms) / 60000))
            when = f" Try again in ~{minutes} min."
        friendly = f"You have hit your ChatGPT usage limit{plan}.{when}".strip()
    if friendly:
        return friendly
    return error.get("message") or message


def _js_round(value: float) -> int:
    floor = int(value // 1)
    return floor + 1 if value - floor >= 0.5 else floor


class _DelayTooLong(WireError):
    pass


def open_stream(
    client: httpx.Client, request: httpx.Request, options: StreamOptions, call: CallContext
) -> httpx.Response:
    max_retries = options.max_retries or 0
    cap = (
        DEFAULT_MAX_RETRY_DELAY_MS
        if options.max_retry_delay_ms is None
        else options.max_retry_delay_ms
    )
    attempt = 0
    while True:
        if call.signal.aborted:
            raise WireError(ABORTED)
        try:
            response = _send(client, request, options, call)
            if response.is_success:
                return response
            text = response.read().decode("utf-8", "replace")
            response.close()
            if attempt < max_retries and _retryable(response.status_code, text):
                delay = server_wait_ms(response.headers)
                if delay is None:
                    delay = BASE_DELAY_MS * 2**attempt
                elif cap > 0 and delay > cap:
                    raise _DelayTooLong(
                        f"Server requested {math.ceil(delay / 1000)}s retry delay "
                        f"(max: {math.ceil(cap / 1000)}s)"
                    )
                reason = error_message(
                    response.status_code, response.reason_phrase, text, call.now_ms()
                )
                _sleep(call, attempt + 1, delay, reason)
                attempt += 1
                continue
            raise HttpStatusError(
                error_message(response.status_code, response.reason_phrase, text, call.now_ms()),
                response.status_code,
                response.headers,
            )
        except _DelayTooLong:
            raise
        except WireError as error:
            if str(error) == ABORTED or call.signal.aborted:
                raise WireError(ABORTED) from None
            if attempt < max_retries and "usage limit" not in str(error) and _is_network(error):
                _sleep(call, attempt + 1, BASE_DELAY_MS * 2**attempt, str(error))
                attempt += 1
                continue
            raise


class _NetworkError(WireError):
    pass


def _is_network(error: WireError) -> bool:
    return isinstance(error, _NetworkError)


def _send(
    client: httpx.Client, request: httpx.Request, options: StreamOptions, call: CallContext
) -> httpx.Response:
    try:
        return client.send(request, stream=True)
    except httpx.TimeoutException as error:
        if call.signal.aborted:
            raise WireError(ABORTED) from error
        if options.timeout_ms:
            raise _NetworkError(
                f"Codex SSE response headers timed out after {options.timeout_ms}ms"
            ) from error
        raise _NetworkError(TIMED_OUT) from error
    except httpx.TransportError as error:
        if call.signal.aborted:
            raise WireError(ABORTED) from error
        text = unreachable_message(str(request.url), error, "fetch failed")
        if is_refused(error):
            raise WireError(text) from error
        raise _NetworkError(text) from error


def _sleep(call: CallContext, attempt: int, delay_ms: float, reason: str) -> None:
    if call.on_retry is not None:
        call.on_retry(attempt, delay_ms, reason)
    if call.signal.wait(max(0.0, delay_ms) / 1000):
        raise WireError(ABORTED)
