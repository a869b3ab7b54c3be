"""``openai-codex-responses``: the ChatGPT backend that serves Codex (``…/codex/responses``).

Same Responses codec as the OpenAI endpoint; the endpoint differs (pi-providers.md §4): the
key is a ChatGPT OAuth access token whose claims carry the account id, identity headers are
``originator: pi`` and Pi's user agent, the body always has ``store: false``,
``instructions``, ``text.verbosity``, encrypted reasoning in ``include`` and the session as
``prompt_cache_key``, and errors and retries are Codex's own. Pi's Codex SSE parser splits
frames on ``\\n\\n`` only; ctxmodes reads SSE with httpx-sse, so CRLF-framed streams work.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from collections.abc import Iterator
from typing import Any

import httpx
import orjson

from ctxmodes.providers import responses_codec
from ctxmodes.providers.call import TIMED_OUT, CallContext, reasoning_effort, server_wait_ms
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import stringify
from ctxmodes.providers.openai_responses import clamp_cache_key, missing_key_message
from ctxmodes.providers.sse import iter_events
from ctxmodes.providers.wire import ABORTED, HttpStatusError, PiContext, StreamOptions, WireError

API = "openai-codex-responses"
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
JWT_CLAIM = "https://api.openai.com/auth"
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."
BASE_DELAY_MS = 1000
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled", "queued", "in_progress"})
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


def account_id(token: str) -> str:
    """The ChatGPT account id in an access token's claims (base64url decoded properly).

    :raises WireError: not a JWT, or no account id (Pi's message).
    """
    parts = token.split(".")
    try:
        if len(parts) != 3:
            raise ValueError("not a JWT")
        payload = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = orjson.loads(base64.urlsafe_b64decode(payload))
        found = claims[JWT_CLAIM]["chatgpt_account_id"]
        if not isinstance(found, str) or not found:
            raise ValueError("no account id")
        return found
    except (ValueError, KeyError, TypeError, binascii.Error, orjson.JSONDecodeError):
        raise WireError("Failed to extract accountId from token") from None


def codex_url(base_url: str | None) -> str:
    raw = base_url if base_url and base_url.strip() else DEFAULT_BASE_URL
    normalized = raw.rstrip("/")
    if normalized.endswith("/codex/responses"):
        return normalized
    if normalized.endswith("/codex"):
        return f"{normalized}/responses"
    return f"{normalized}/codex/responses"


def backend_base(base_url: str | None) -> str:
    """The backend base beside the model endpoint (``…/backend-api/codex``): where the
    ``alpha/history`` and ``alpha/notes`` endpoints live."""
    return codex_url(base_url).removesuffix("/responses")


def identity_headers(token: str, user_agent: str) -> dict[str, str]:
    """The account's authentication and Pi's identity, as every Codex backend call sends them.

    :raises WireError: the token carries no account id.
    """
    return {
        "authorization": f"Bearer {token}",
        "chatgpt-account-id": account_id(token),
        "originator": "pi",
        "user-agent": user_agent,
    }


def build_headers(
    model: ModelSpec,
    options: StreamOptions,
    token: str,
    account: str,
    user_agent: str,
    session: str | None,
) -> dict[str, str]:
    """Model headers, then the caller's (``None`` removes one), then Pi's fixed ones."""
    headers = httpx.Headers(model.headers or {})
    for key, value in options.headers.items():
        if value is None:
            headers.pop(key, None)
        else:
            headers[key] = value
    headers["Authorization"] = f"Bearer {token}"
    headers["chatgpt-account-id"] = account
    headers["originator"] = "pi"
    headers["User-Agent"] = user_agent
    headers["OpenAI-Beta"] = "responses=experimental"
    headers["accept"] = "text/event-stream"
    headers["content-type"] = "application/json"
    if session:
        headers["session-id"] = session
        headers["x-client-request-id"] = session
    return dict(headers.multi_items())


def build_body(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    effort: str | None,
    session: str | None,
    now_ms: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model.id,
        "store": False,
        "stream": True,
        "instructions": context.system_prompt or DEFAULT_INSTRUCTIONS,
        "input": responses_codec.convert_messages(
            model, context.system_prompt, context.messages, now_ms, include_system_prompt=False
        ),
        "text": {"verbosity": options.text_verbosity or "low"},
        "include": ["reasoning.encrypted_content"],
    }
    if session is not None:
        body["prompt_cache_key"] = session
    body["tool_choice"] = options.tool_choice if options.tool_choice is not None else "auto"
    body["parallel_tool_calls"] = True
    if options.metadata:
        body["client_metadata"] = options.metadata
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.service_tier is not None:
        body["service_tier"] = options.service_tier
    if context.tools:
        body["tools"] = responses_codec.convert_tools(
            context.tools, strict=None, supports_strict=model.flag("supportsStrictMode", True)
        )
    if effort is not None:
        levels = model.thinking_level_map or {}
        value = (levels.get("off") or "none") if effort == "none" else levels.get(effort, effort)
        if value is not None:
            body["reasoning"] = {"effort": value, "summary": options.reasoning_summary or "auto"}
    return body


def stream(
    model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
) -> dict[str, Any]:
    """One call, pi-ai's Codex ``streamSimple``: returns the final message (also on failure).

    :raises WireError: no token at all (pi-ai throws before streaming).
    """
    if not options.api_key:
        raise WireError(missing_key_message(model.provider))
    from ctxmodes.providers.call import clamp_max_tokens

    options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    effort = reasoning_effort(model, options.reasoning)
    return call.run(model, API, lambda output: _call(model, context, options, call, effort, output))


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    effort: str | None,
    output: dict[str, Any],
) -> None:
    token = options.api_key or ""
    account = account_id(token)
    session = clamp_cache_key(options.session_id if options.cache_retention != "none" else None)
    body = build_body(model, context, options, effort, session, call.now_ms)
    headers = build_headers(model, options, token, account, call.user_agent, session)
    client = call.client(options.timeout_ms)
    request = client.build_request(
        "POST", codex_url(model.base_url), headers=headers, content=call.encode(body)
    )
    response = _open(client, request, options, call)
    call.started()
    reader = responses_codec.ResponsesStream(
        model,
        output,
        call.emit,
        service_tier=options.service_tier,
        resolve_tier=_resolve_tier,
    )
    with contextlib.closing(response):
        for event in call.guard(_codex_events(response, output), call.signal):
            reader.feed(event)
    if call.signal.aborted:
        raise WireError(ABORTED)
    if not reader.terminal:
        raise WireError("OpenAI Responses stream ended before a terminal response event")
    if output["stopReason"] == "pending":
        raise WireError("Codex stream ended without a stop reason")
    if output["stopReason"] in ("error", "aborted"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")


def _resolve_tier(answered: str | None, requested: str | None) -> str | None:
    if answered == "default" and requested in ("flex", "priority"):
        return requested
    return answered or requested


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


def _open(
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
                        f"Server requested {_ceil(delay / 1000)}s retry delay "
                        f"(max: {_ceil(cap / 1000)}s)"
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
        raise _NetworkError("fetch failed") from error


def _sleep(call: CallContext, attempt: int, delay_ms: float, reason: str) -> None:
    if call.on_retry is not None:
        call.on_retry(attempt, delay_ms, reason)
    if call.signal.wait(max(0.0, delay_ms) / 1000):
        raise WireError(ABORTED)


def _ceil(value: float) -> int:
    whole = int(value)
    return whole if whole == value else whole + 1


def _codex_events(response: httpx.Response, output: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Codex's event mapping over a correct SSE parse (see the module docstring)."""
    for sse in iter_events(response, dispatch_at_end=True):
        data = sse.data.strip()
        if not data or data == "[DONE]":
            continue
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise WireError(f"Invalid Codex SSE JSON: {error}") from error
        kind = event.get("type") if isinstance(event, dict) else None
        if not isinstance(kind, str):
            continue
        if kind == "error":
            nested = event.get("error") if isinstance(event.get("error"), dict) else {}
            message = event.get("message") if isinstance(event.get("message"), str) else None
            message = message or (
                nested.get("message") if isinstance(nested.get("message"), str) else None
            )
            code = event.get("code") if isinstance(event.get("code"), str) else nested.get("code")
            raise WireError(f"Codex error: {message or code or stringify(event)}")
        if kind == "response.failed":
            failure = (event.get("response") or {}).get("error") or {}
            raise WireError(failure.get("message") or "Codex response failed")
        if kind in ("response.done", "response.completed", "response.incomplete"):
            answer = event.get("response")
            if isinstance(answer, dict):
                if isinstance(answer.get("end_turn"), bool):
                    output["endTurn"] = answer["end_turn"]
                status = answer.get("status")
                answer = {**answer, "status": status if status in _STATUSES else None}
            yield {**event, "type": "response.completed", "response": answer}
            return
        yield event
