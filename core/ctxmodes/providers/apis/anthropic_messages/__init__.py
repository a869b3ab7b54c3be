"""``anthropic-messages``: Anthropic's Messages API (``POST <base>/v1/messages?beta=true``),
streamed, exactly as pi-ai 0.85 speaks it through the Anthropic SDK.

The request is built in :mod:`.request`, the events are read in :mod:`.stream`. Pi runs the
SDK without retries and repeats a failed request with its own ``retryProviderRequest``
(:mod:`~ctxmodes.providers.transport.retry`), so only ``maxRetries`` makes it retry.
"""

from __future__ import annotations

import contextlib

from ctxmodes.providers.apis.anthropic_messages.request import (
    AnthropicCompat,
    Thinking,
    beta_features,
    build_body,
    build_headers,
    is_oauth_token,
    status_message,
)
from ctxmodes.providers.apis.anthropic_messages.stream import MessagesStream, message_events
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.budget import clamp_max_tokens, fit_thinking
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.options import check_api_key
from ctxmodes.providers.transport.retry import open_stream
from ctxmodes.providers.wire import ABORTED, PiContext, PiMessage, StreamOptions, WireError

API = "anthropic-messages"


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """No developer role: instructions of the system's authority go into system blocks."""
    return ModelCapabilities(
        developer_role=False,
        namespaced_tools=False,
        images=model.images,
        reasoning=model.reasoning,
    )


def effort_for(model: ModelSpec, level: str) -> str:
    """pi-ai's ``mapThinkingLevelToEffort`` for adaptive-thinking models."""
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def plan_thinking(model: ModelSpec, context: PiContext, options: StreamOptions) -> Thinking:
    """pi-ai's ``streamSimple``: the output cap fitted into the window (``options.max_tokens``
    is set) and the thinking settings for the session's level."""
    options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    level = options.reasoning
    if not level:
        return Thinking(enabled=False)
    if AnthropicCompat.of(model).adaptive_thinking:
        return Thinking(enabled=True, effort=effort_for(model, level))
    options.max_tokens, budget = fit_thinking(
        model, context, options.max_tokens, level, options.thinking_budgets
    )
    return Thinking(enabled=True, budget_tokens=budget)


def stream(
    model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
) -> PiMessage:
    """One call, pi-ai's ``streamSimple``: returns the final message (also on failure).

    :raises WireError: no API key (pi-ai throws before streaming; nothing to store).
    """
    check_api_key(model, options, also=("x-api-key",))
    key = options.api_key or None
    thinking = plan_thinking(model, context, options)
    compat = AnthropicCompat.of(model)
    level = (thinking.effort or "high") if compat.mid_conversation_effort else None

    def body(output: PiMessage) -> None:
        if level is not None:
            _insert_after(output, "model", "providerThinkingLevel", level)
        _call(model, context, options, call, key, thinking, output)

    return call.run(model, API, body)


def _insert_after(output: PiMessage, after: str, key: str, value: object) -> None:
    items = list(output.items())
    output.clear()
    for name, existing in items:
        output[name] = existing
        if name == after:
            output[key] = value


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    api_key: str | None,
    thinking: Thinking,
    output: PiMessage,
) -> None:
    oauth = api_key is not None and is_oauth_token(api_key)
    betas = beta_features(model, context, options, oauth, thinking)
    headers = build_headers(model, options, api_key, call.user_agent, betas)
    body = build_body(model, context, options, oauth=oauth, thinking=thinking, now_ms=call.now_ms)
    client = call.client(options.timeout_ms)
    url = model.base_url.rstrip("/") + "/v1/messages?beta=true"
    request = client.build_request("POST", url, headers=headers, content=call.encode(body))
    response = open_stream(
        client,
        request,
        call.signal,
        status_message=status_message,
        max_retries=options.max_retries,
        max_retry_delay_ms=options.max_retry_delay_ms,
        on_retry=call.on_retry,
    )
    call.started()
    reader = MessagesStream(model, output, call.emit, tools=context.tools, oauth=oauth)
    with contextlib.closing(response):
        for event in call.guard(message_events(response), call.signal):
            reader.feed(event)
    if call.signal.aborted:
        raise WireError(ABORTED)
    if output["stopReason"] == "pending":
        raise WireError("Anthropic stream ended without a stop reason")
    if output["stopReason"] in ("aborted", "error"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")
