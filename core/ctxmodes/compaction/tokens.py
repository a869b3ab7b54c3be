"""Token estimates for messages and whole contexts, computed exactly as Pi computes them.

A message costs ``ceil(chars / 4)`` tokens, where ``chars`` counts UTF-16 code units of the
text the model would read (an image counts as 4,800 characters). A context's size is taken
from the last assistant reply that reported usage, plus estimates for what came after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxmodes.compaction._access import (
    MISSING,
    EntryLike,
    MessageLike,
    field,
    js_truthy,
    require_str,
)
from ctxmodes.compaction._js import js_length
from ctxmodes.compaction.errors import MalformedMessageError
from ctxmodes.session import codec
from ctxmodes.session.models import Usage

ESTIMATED_IMAGE_CHARS: Final = 4800

Number = int | float


class ContextTokenEstimate(BaseModel):
    """How big a context is, and how much of that figure is measured rather than estimated."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    tokens: Number
    #: Tokens reported by the last usable assistant usage (0 when there is none).
    usage_tokens: Number = Field(alias="usageTokens")
    #: Estimated tokens of the messages after that assistant message.
    trailing_tokens: int = Field(alias="trailingTokens")
    #: Index of that assistant message, or ``None`` when everything is estimated.
    last_usage_index: int | None = Field(alias="lastUsageIndex")


def calculate_context_tokens(usage: Usage) -> Number:
    """Context size reported by a usage: ``totalTokens``, or the sum of its parts when 0."""
    return usage.total_tokens or (usage.input + usage.output + usage.cache_read + usage.cache_write)


def _as_usage(value: Any) -> Usage | None:
    if isinstance(value, Usage):
        return value
    if not isinstance(value, dict):
        return None
    # A message kept as unknown holds its usage as stored; an incomplete one yields no size
    # in Pi either (its arithmetic ends in NaN).
    try:
        return Usage.model_validate(value, strict=False)
    except ValidationError:
        return None


def _usable_usage(message: MessageLike) -> Usage | None:
    if field(message, "role") != "assistant":
        return None
    # Aborted and failed replies report partial or zero usage that says nothing about size.
    if field(message, "stopReason") in ("aborted", "error"):
        return None
    usage = _as_usage(field(message, "usage"))
    return usage if usage is not None and calculate_context_tokens(usage) > 0 else None


def get_last_assistant_usage(entries: Sequence[EntryLike]) -> Usage | None:
    """The usage of the last assistant message among ``entries`` that reported a real size."""
    for entry in reversed(entries):
        if field(entry, "type") == "message":
            usage = _usable_usage(field(entry, "message"))
            if usage is not None:
                return usage
    return None


def _content_chars(content: Any, where: str) -> int:
    if isinstance(content, str):
        return js_length(content)
    if not isinstance(content, list):
        raise MalformedMessageError(f"{where}: content is neither text nor a list of blocks")
    chars = 0
    for block in content:
        if block is None:
            raise MalformedMessageError(f"{where}: content holds a null block")
        kind = field(block, "type")
        if kind == "text":
            if js_truthy(field(block, "text")):
                chars += js_length(require_str(block, "text", where))
        elif kind == "image":
            chars += ESTIMATED_IMAGE_CHARS
    return chars


def _assistant_chars(message: MessageLike) -> int:
    content = field(message, "content")
    if not isinstance(content, list):
        raise MalformedMessageError("assistant message: content is not a list of blocks")
    chars = 0
    for block in content:
        if block is None:
            raise MalformedMessageError("assistant message: content holds a null block")
        kind = field(block, "type")
        if kind == "text":
            chars += js_length(require_str(block, "text", "assistant message"))
        elif kind == "thinking":
            chars += js_length(require_str(block, "thinking", "assistant message"))
        elif kind == "toolCall":
            name = require_str(block, "name", "assistant tool call")
            arguments = field(block, "arguments")
            if arguments is MISSING:
                raise MalformedMessageError("assistant tool call: no arguments")
            chars += js_length(name) + js_length(codec.dumps(arguments).decode("utf-8"))
    return chars


def _message_chars(message: MessageLike) -> int:
    role = field(message, "role")
    if role in ("user", "custom", "toolResult"):
        return _content_chars(field(message, "content"), f"{role} message")
    if role == "assistant":
        return _assistant_chars(message)
    if role == "bashExecution":
        command = require_str(message, "command", "bashExecution message")
        output = require_str(message, "output", "bashExecution message")
        return js_length(command) + js_length(output)
    if role in ("branchSummary", "compactionSummary"):
        return js_length(require_str(message, "summary", f"{role} message"))
    return 0


def estimate_tokens(message: MessageLike) -> int:
    """Estimated tokens of one message (``ceil(chars / 4)``; 0 for roles the model never sees).

    :raises MalformedMessageError: when a field the estimate reads is missing or null, where
        Pi throws a ``TypeError``.
    """
    return -(-_message_chars(message) // 4)


def estimate_messages_tokens(messages: Sequence[MessageLike]) -> int:
    """Sum of :func:`estimate_tokens` over ``messages`` (Pi's estimate after a compaction)."""
    return sum(estimate_tokens(message) for message in messages)


def estimate_context_tokens(messages: Sequence[MessageLike]) -> ContextTokenEstimate:
    """Size of a context: the last usable assistant usage plus estimates of what follows it.

    Only the messages after that assistant message are estimated, so the cost is bounded by
    the tail of the context, not its length (unless no message ever reported usage).
    """
    for index in range(len(messages) - 1, -1, -1):
        usage = _usable_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = estimate_messages_tokens(messages[index + 1 :])
            return ContextTokenEstimate(
                tokens=usage_tokens + trailing,
                usage_tokens=usage_tokens,
                trailing_tokens=trailing,
                last_usage_index=index,
            )
    estimated = estimate_messages_tokens(messages)
    return ContextTokenEstimate(
        tokens=estimated, usage_tokens=0, trailing_tokens=estimated, last_usage_index=None
    )
