"""Recognising a model response that failed because the context was too large.

The patterns match the error texts providers are known to return for an oversized prompt
(the same list Pi's model layer uses), so a session that overflows is compacted and retried
instead of failing.
"""

from __future__ import annotations

import re
from typing import Final

from ctxmodes.session.models import AssistantMessage

_OVERFLOW: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"prompt is too long",
        r"request_too_large",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length"
        r"(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"exceeds the limit of \d+",
        r"exceeds the available context size",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"too large for model with \d+ maximum context length",
        r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length",
        r"range of input length should be",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
    )
)
# Rate limits and throttling mention tokens too, but compacting would not help them.
_NOT_OVERFLOW: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"^(Throttling error|Service unavailable):",
        r"rate limit",
        r"too many requests",
    )
)


def is_context_overflow(message: AssistantMessage, context_window: int) -> bool:
    """True when ``message`` shows the prompt did not fit ``context_window``: an overflow
    error text, a successful answer whose input exceeded the window (providers that truncate
    silently), or a ``length`` stop with no output and a full window."""
    error = message.error_message
    if (
        message.stop_reason == "error"
        and error
        and not any(p.search(error) for p in _NOT_OVERFLOW)
        and any(p.search(error) for p in _OVERFLOW)
    ):
        return True
    if not context_window:
        return False
    input_tokens = message.usage.input + message.usage.cache_read
    if message.stop_reason == "stop":
        return input_tokens > context_window
    return (
        message.stop_reason == "length"
        and message.usage.output == 0
        and input_tokens >= context_window * 0.99
    )


def is_recoverable_length(message: AssistantMessage, max_output_tokens: int) -> bool:
    """True for a ``length`` stop that ended below the model's own output limit: the
    request was clamped by a full context, so compacting lets the answer complete."""
    return (
        message.stop_reason == "length"
        and max_output_tokens > 0
        and message.usage.output < max_output_tokens
    )
