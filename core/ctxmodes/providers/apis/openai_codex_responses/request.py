"""The Codex request: the account in the token's claims, Pi's identity headers, the URL
under the backend base, and the body Pi's Codex transport sends (``pi-providers.md`` §4)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

import httpx
import orjson

from ctxmodes.providers.apis.openai.responses_request import convert_messages, convert_tools
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import JsonObject, PiContext, StreamOptions, WireError

DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
JWT_CLAIM = "https://api.openai.com/auth"
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."


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
    now_ms: Callable[[], int],
) -> JsonObject:
    body: JsonObject = {
        "model": model.id,
        "store": False,
        "stream": True,
        "instructions": context.system_prompt or DEFAULT_INSTRUCTIONS,
        "input": convert_messages(
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
        body["tools"] = convert_tools(
            context.tools, strict=None, supports_strict=model.flag("supportsStrictMode", True)
        )
    if effort is not None:
        levels = model.thinking_level_map or {}
        value = (levels.get("off") or "none") if effort == "none" else levels.get(effort, effort)
        if value is not None:
            body["reasoning"] = {"effort": value, "summary": options.reasoning_summary or "auto"}
    return body
