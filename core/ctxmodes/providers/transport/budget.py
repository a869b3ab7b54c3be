"""The output cap pi-ai sends: the requested or the model's maximum, within what the context
window leaves free after pi-ai's own estimate of the context (``estimateContextTokens``)."""

from __future__ import annotations

import math
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import js_length, stringify
from ctxmodes.providers.wire import JsonObject, PiContext

#: Tokens pi-ai always leaves free in the context window when it sizes ``maxTokens``.
CONTEXT_SAFETY_TOKENS = 4096


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_length(content)
    return sum(
        js_length(block.get("text", "")) if block.get("type") == "text" else 4800
        for block in content or ()
    )


def _message_tokens(message: JsonObject) -> int:
    if message.get("role") in ("user", "toolResult"):
        return math.ceil(_content_chars(message.get("content")) / 4)
    chars = 0
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            chars += js_length(block.get("text", ""))
        elif kind == "thinking":
            chars += js_length(block.get("thinking", ""))
        else:
            chars += js_length(block.get("name", "")) + js_length(stringify(block.get("arguments")))
    return math.ceil(chars / 4)


def _usage_tokens(usage: JsonObject) -> int:
    total: int = usage.get("totalTokens") or 0
    return total or (
        usage.get("input", 0)
        + usage.get("output", 0)
        + usage.get("cacheRead", 0)
        + usage.get("cacheWrite", 0)
    )


def estimate_context_tokens(context: PiContext) -> int:
    """pi-ai's ``estimateContextTokens``: the last usable usage plus chars/4 of what follows,
    else chars/4 of everything including system prompt and tools."""
    messages = context.messages
    last: int | None = None
    latest_prefix = -math.inf
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            applies = message.get("timestamp", 0) >= latest_prefix
            if (
                applies
                and message.get("stopReason") not in ("aborted", "error")
                and _usage_tokens(message.get("usage") or {}) > 0
            ):
                last = index
        latest_prefix = max(latest_prefix, message.get("timestamp") or 0)
    if last is not None:
        tokens = _usage_tokens(messages[last]["usage"])
        tokens += sum(_message_tokens(message) for message in messages[last + 1 :])
        added = {
            name
            for message in messages[last + 1 :]
            if message.get("role") == "toolResult"
            for name in message.get("addedToolNames") or ()
        }
        added_tools = [tool for tool in context.tools if tool.get("name") in added]
        if added_tools:
            tokens += math.ceil(js_length(stringify(added_tools)) / 4)
        return tokens
    tokens = sum(_message_tokens(message) for message in messages)
    if context.system_prompt:
        tokens += math.ceil(js_length(context.system_prompt) / 4)
    if context.tools:
        tokens += math.ceil(js_length(stringify(context.tools)) / 4)
    return tokens


def clamp_max_tokens(model: ModelSpec, context: PiContext, requested: int | None) -> int:
    """pi-ai's ``maxTokens``: the request's or the model's, within the free context."""
    budget = requested if requested is not None else model.max_tokens
    if model.context_window <= 0:
        return max(1, budget)
    available = model.context_window - estimate_context_tokens(context) - CONTEXT_SAFETY_TOKENS
    return min(budget, max(1, available))
