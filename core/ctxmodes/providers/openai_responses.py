"""``openai-responses``: the OpenAI Responses API (``POST <base>/responses``), streamed.

Requests, headers and messages are pi-ai 0.85's (see ``pi-providers.md`` §3). Pi sends them
through the OpenAI SDK; ctxmodes speaks the same wire over httpx and httpx-sse, without the
SDK's ``x-stainless-*`` headers.
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any

from ctxmodes.providers import responses_codec, sdk_http
from ctxmodes.providers.call import CallContext
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import ABORTED, PiContext, StreamOptions, WireError

API = "openai-responses"
#: OpenAI rejects ``max_output_tokens`` below 16.
MIN_OUTPUT_TOKENS = 16
PROMPT_CACHE_KEY_MAX = 64


def cache_retention(options: StreamOptions) -> str:
    if options.cache_retention:
        return options.cache_retention
    env = options.env if options.env is not None else os.environ
    return "long" if env.get("PI_CACHE_RETENTION") == "long" else "short"


def clamp_cache_key(key: str | None) -> str | None:
    """Session ids become prompt cache keys of at most 64 characters (code points)."""
    return None if key is None else key[:PROMPT_CACHE_KEY_MAX]


def missing_key_message(provider: str) -> str:
    return f"No API key for provider: {provider}"


def has_header(headers: dict[str, str | None], name: str) -> bool:
    return any(
        key.lower() == name and value is not None and value.strip()
        for key, value in headers.items()
    )


def check_api_key(model: ModelSpec, options: StreamOptions) -> str:
    """The key to send; pi-ai throws synchronously without one (unless an
    ``authorization`` header is given)."""
    if options.api_key:
        return options.api_key
    if options.keyless:
        return ""
    if has_header(options.headers, "authorization") or has_header(
        options.headers, "cf-aig-authorization"
    ):
        return "unused"
    raise WireError(missing_key_message(model.provider))


def build_headers(
    model: ModelSpec, options: StreamOptions, api_key: str, user_agent: str, session: str | None
) -> dict[str, str]:
    headers: dict[str, str | None] = {"User-Agent": user_agent, **(model.headers or {})}
    if session:
        affinity = model.flag("sessionAffinityFormat") or (
            "openrouter"
            if model.provider == "openrouter" or "openrouter.ai" in model.base_url
            else "openai"
        )
        if affinity == "openrouter":
            headers["x-session-id"] = session
        else:
            if affinity == "openai":
                headers["session_id"] = session
            headers["x-client-request-id"] = session
    return sdk_http.sdk_headers(headers, options.headers, api_key)


def build_body(
    model: ModelSpec, context: PiContext, options: StreamOptions, effort: str | None, now_ms: Any
) -> dict[str, Any]:
    retention = cache_retention(options)
    body: dict[str, Any] = {
        "model": model.id,
        "input": responses_codec.convert_messages(
            model, context.system_prompt, context.messages, now_ms
        ),
        "stream": True,
    }
    if retention != "none" and options.session_id is not None:
        body["prompt_cache_key"] = clamp_cache_key(options.session_id)
    if retention == "long" and model.flag("supportsLongCacheRetention", True):
        body["prompt_cache_retention"] = "24h"
    if retention == "none" and model.flag("supportsExplicitPromptCacheMode", False):
        body["prompt_cache_options"] = {"mode": "explicit"}
    body["store"] = False
    if options.max_tokens and model.flag("supportsMaxOutputTokens", True):
        body["max_output_tokens"] = max(options.max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.service_tier is not None:
        body["service_tier"] = options.service_tier
    if context.tools:
        body["tools"] = responses_codec.convert_tools(
            context.tools, supports_strict=model.flag("supportsStrictMode", False)
        )
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    if model.reasoning:
        levels = model.thinking_level_map or {}
        if effort or options.reasoning_summary:
            body["reasoning"] = {
                "effort": (levels.get(effort) or effort) if effort else "medium",
                "summary": options.reasoning_summary or "auto",
            }
            body["include"] = ["reasoning.encrypted_content"]
        elif model.provider != "github-copilot" and not ("off" in levels and levels["off"] is None):
            body["reasoning"] = {"effort": levels.get("off") or "none"}
    if options.sampling_params:
        body.update(options.sampling_params)
    return body


def stream(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
) -> dict[str, Any]:
    """One call, pi-ai's ``streamSimple``: returns the final message (also on failure).

    :raises WireError: no API key (pi-ai throws before streaming; nothing to store).
    """
    return sdk_http.stream_simple(
        API,
        model,
        context,
        options,
        call,
        functools.partial(_call, model, context, options, call),
    )


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    api_key: str,
    effort: str | None,
    output: dict[str, Any],
) -> None:
    retention = cache_retention(options)
    session = options.session_id if retention != "none" else None
    headers = build_headers(model, options, api_key, call.user_agent, session)
    body = build_body(model, context, options, effort, call.now_ms)
    url = model.base_url.rstrip("/") + "/responses"
    response = sdk_http.post_stream(
        call, url, headers, body, options, error_prefix="OpenAI API error"
    )
    reader = responses_codec.ResponsesStream(
        model, output, call.emit, service_tier=options.service_tier
    )
    with contextlib.closing(response):
        for event in call.guard(sdk_http.iter_sdk_events(response), call.signal):
            reader.feed(event)
    if not reader.terminal:
        raise WireError("OpenAI Responses stream ended before a terminal response event")
    if call.signal.aborted:
        raise WireError(ABORTED)
    if output["stopReason"] == "pending":
        raise WireError("OpenAI Responses stream ended without a stop reason")
    if output["stopReason"] in ("aborted", "error"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")
