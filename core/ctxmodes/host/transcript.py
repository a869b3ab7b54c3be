"""A listener that prints a readable transcript of a session (``ctxmodes run``)."""

from __future__ import annotations

import json
from typing import Final, TextIO

from ctxmodes.host import records
from ctxmodes.host.records import HostRecord
from ctxmodes.session.models import (
    AssistantMessage,
    CustomMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ctxmodes.terminal_text import visible_lines

#: Tool calls and results are cut to this many characters (the file has them in full).
ABBREVIATE_AT: Final = 160


def abbreviate(text: str, limit: int = ABBREVIATE_AT) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.text for block in content if isinstance(block, TextContent))
    return ""


class TranscriptPrinter:
    """Prints user and assistant text in full, tool calls and results abbreviated, custom
    messages that are displayed, compactions and tree moves."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def __call__(self, record: HostRecord) -> None:
        line = self._render(record)
        if line is not None:
            # What a model, a tool or a file wrote is shown, never obeyed by a terminal.
            print(visible_lines(line), file=self._out, flush=True)

    def _render(self, record: HostRecord) -> str | None:
        if isinstance(record, records.MessageEnded):
            return self._message(record)
        if isinstance(record, records.CompactionEnded) and record.entry is not None:
            entry = record.entry
            return (
                f"[compaction, {record.trigger}] kept from {entry.first_kept_entry_id} "
                f"({entry.tokens_before} tokens before)"
            )
        if isinstance(record, records.AutoRetryStarted):
            return (
                f"[retry {record.attempt}/{record.max_attempts}] in "
                f"{record.delay_ms / 1000:g}s after: {abbreviate(record.error_message)}"
            )
        if isinstance(record, records.AutoRetryEnded):
            if record.success:
                return f"[retry] succeeded on attempt {record.attempt}"
            if record.attempt:
                return f"[retry] gave up after {record.attempt}: {record.final_error or 'unknown'}"
            return f"[retry] not retried: {record.final_error or 'unknown'}"
        if isinstance(record, records.TransportRetryScheduled):
            return (
                f"[transport retry {record.attempt}/{record.max_attempts}] in "
                f"{record.delay_ms / 1000:g}s after: {abbreviate(record.error_message)}"
            )
        if isinstance(record, records.SummarizationRetryScheduled):
            return (
                f"[summary retry {record.attempt}/{record.max_attempts}] in "
                f"{record.delay_ms / 1000:g}s after: {abbreviate(record.error_message)}"
            )
        if isinstance(record, records.TreeNavigated):
            summary = " with a branch summary" if record.summary_entry is not None else ""
            return f"[tree] moved from {record.old_leaf_id} to {record.new_leaf_id}{summary}"
        return None

    def _message(self, record: records.MessageEnded) -> str | None:
        message = record.message
        if isinstance(message, UserMessage):
            return f"> {_text(message.content)}"
        if isinstance(message, AssistantMessage):
            return self._assistant(message)
        if isinstance(message, ToolResultMessage):
            mark = "x" if message.is_error else "<-"
            return f"  {mark} {message.tool_name}: {abbreviate(_text(message.content))}"
        if isinstance(message, CustomMessage) and message.display:
            return f"[{message.custom_type}] {abbreviate(_text(message.content))}"
        return None

    def _assistant(self, message: AssistantMessage) -> str | None:
        lines: list[str] = []
        for block in message.content:
            if isinstance(block, TextContent) and block.text:
                lines.append(block.text)
            elif isinstance(block, ThinkingContent) and block.thinking:
                lines.append(f"(thinking) {abbreviate(block.thinking)}")
            elif isinstance(block, ToolCall):
                arguments = json.dumps(block.arguments, ensure_ascii=False)
                lines.append(f"  -> {block.name} {abbreviate(arguments)}")
        if message.stop_reason == "error":
            lines.append(f"! model error: {message.error_message or 'unknown error'}")
        elif message.stop_reason == "aborted":
            lines.append("(aborted)")
        return "\n".join(lines) if lines else None
