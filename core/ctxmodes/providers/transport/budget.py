"""The output cap pi-ai sends: the requested or the model's maximum, within what the context
window leaves free after pi-ai's own estimate of the context (``estimateContextTokens``); and
the thinking budget of each level where a format counts thinking in tokens (pi-ai's
``simple-options``), which the user's ``thinkingBudgets`` override level by level."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import js_length, stringify
from ctxmodes.providers.wire import JsonObject, PiContext

#: Tokens pi-ai always leaves free in the context window when it sizes ``maxTokens``.
CONTEXT_SAFETY_TOKENS = 4096
#: pi-ai's thinking budget of each level; ``xhigh`` and ``max`` think with ``high``'s.
DEFAULT_THINKING_BUDGETS: Mapping[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
#: Tokens always left for the answer when a thinking budget shares the output cap.
MIN_ANSWER_TOKENS = 1024


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


def budget_level(level: str) -> str:
    """The level whose budget ``level`` thinks with (pi-ai's ``clampReasoning``)."""
    return "high" if level in ("xhigh", "max") else level


def thinking_budget(level: str, custom: Mapping[str, int] | None) -> int:
    """pi-ai's ``thinkingBudgetForLevel``: the user's budget for the level, else pi-ai's."""
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom or {})}
    return budgets.get(budget_level(level), 0)


def answer_room(budget: int, ceiling: int) -> int:
    """``budget`` within ``ceiling``, leaving :data:`MIN_ANSWER_TOKENS` for the answer."""
    return min(budget, max(0, ceiling - MIN_ANSWER_TOKENS))


def fit_thinking(
    model: ModelSpec,
    context: PiContext,
    max_tokens: int,
    level: str,
    custom: Mapping[str, int] | None,
) -> tuple[int, int]:
    """pi-ai's ``adjustMaxTokensForThinking`` and the context fit after it, for formats that
    give thinking a budget inside the output cap: the cap grows by the level's budget (within
    the model's), then fits the window again; the budget leaves room for the answer.

    :returns: the output cap and the thinking budget.
    """
    budget = thinking_budget(level, custom)
    ceiling = min(max_tokens + budget, model.max_tokens)
    if ceiling <= budget:
        budget = answer_room(budget, ceiling)
    cap = clamp_max_tokens(model, context, ceiling)
    return cap, answer_room(budget, cap)
