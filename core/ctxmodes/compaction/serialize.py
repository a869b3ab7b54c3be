"""Flatten model-facing messages into the plain transcript a summarizer reads.

The transcript is labelled text (``[User]: ...``, ``[Assistant]: ...``) rather than a list of
chat messages, so the summarization model reads it as material instead of a conversation
to continue. Tool results are cut to their first 2,000 characters, which is plenty to
summarize from and keeps the request small. The format is Pi's, character for character.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ctxmodes.compaction._access import MISSING, MessageLike, field
from ctxmodes.compaction._js import js_entries, js_length, js_prefix
from ctxmodes.compaction.errors import MalformedMessageError
from ctxmodes.session import codec

TOOL_RESULT_MAX_CHARS: Final = 2000


def content_text(content: Any, separator: str, where: str) -> str:
    """The text blocks of ``content`` joined by ``separator`` (a string passes through)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise MalformedMessageError(f"{where}: content is neither text nor a list of blocks")
    texts: list[str] = []
    for block in content:
        if block is None:
            raise MalformedMessageError(f"{where}: content holds a null block")
        if field(block, "type") != "text":
            continue
        text = field(block, "text")
        if text is None or text is MISSING:
            text = ""  # as Array.join renders null and undefined
        elif not isinstance(text, str):
            raise MalformedMessageError(f"{where}: a text block's text is not a string")
        texts.append(text)
    return separator.join(texts)


def truncate_for_summary(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    """``text`` cut to ``max_chars`` UTF-16 units, with a note saying how much was dropped."""
    length = js_length(text)
    if length <= max_chars:
        return text
    return f"{js_prefix(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _tool_call_text(block: Any) -> str:
    name = field(block, "name")
    arguments = field(block, "arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise MalformedMessageError("assistant tool call: needs a name and an arguments object")
    rendered = ", ".join(
        f"{key}={codec.dumps(value).decode('utf-8')}" for key, value in js_entries(arguments)
    )
    return f"{name}({rendered})"


def _assistant_parts(message: MessageLike) -> list[str]:
    content = field(message, "content")
    if not isinstance(content, list):
        raise MalformedMessageError("assistant message: content is not a list of blocks")
    thinking: list[str] = []
    calls: list[str] = []
    has_text = False
    for block in content:
        if block is None:
            raise MalformedMessageError("assistant message: content holds a null block")
        kind = field(block, "type")
        if kind == "thinking":
            value = field(block, "thinking")
            thinking.append(value if isinstance(value, str) else "")
        elif kind == "toolCall":
            calls.append(_tool_call_text(block))
        elif kind == "text":
            has_text = True
    parts: list[str] = []
    if thinking:
        parts.append("[Assistant thinking]: " + "\n".join(thinking))
    if has_text:
        parts.append("[Assistant]: " + content_text(content, "\n", "assistant message"))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))
    return parts


def serialize_conversation(messages: Sequence[MessageLike]) -> str:
    """The transcript of ``messages``, which must already be model-facing.

    Pass the output of :func:`ctxmodes.session.convert.convert_to_llm`: summaries, custom
    messages and shell commands only appear once they have become user messages.
    """
    parts: list[str] = []
    for message in messages:
        role = field(message, "role")
        if role == "user":
            text = content_text(field(message, "content"), "", "user message")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_parts(message))
        elif role == "toolResult":
            text = content_text(field(message, "content"), "", "toolResult message")
            if text:
                parts.append(f"[Tool result]: {truncate_for_summary(text)}")
    return "\n\n".join(parts)
