"""The OpenAI Responses request: headers and body as pi-ai 0.85 sends them through the
OpenAI SDK (``pi-providers.md`` §3)."""

from __future__ import annotations

from collections.abc import Callable

from ctxmodes.providers.apis.openai import sdk
from ctxmodes.providers.apis.openai.responses_request import (
    add_reasoning,
    clamp_cache_key,
    convert_messages,
    convert_tools,
)
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.options import cache_retention
from ctxmodes.providers.wire import JsonObject, PiContext, StreamOptions

#: OpenAI rejects ``max_output_tokens`` below 16.
MIN_OUTPUT_TOKENS = 16


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
    return sdk.sdk_headers(headers, options.headers, api_key)


def build_body(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    effort: str | None,
    now_ms: Callable[[], int],
) -> JsonObject:
    retention = cache_retention(options)
    body: JsonObject = {
        "model": model.id,
        "input": convert_messages(model, context.system_prompt, context.messages, now_ms),
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
        body["tools"] = convert_tools(
            context.tools, supports_strict=model.flag("supportsStrictMode", False)
        )
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    add_reasoning(
        body,
        model,
        effort,
        options.reasoning_summary,
        turn_off=model.provider != "github-copilot",
    )
    if options.sampling_params:
        body.update(options.sampling_params)
    return body
