"""Pi's JSON event stream (``pi --mode json``): one JSON line per session event.

A listener writing, for each host record Pi has an event for, the JSON line Pi's print mode
writes: the event with its camelCase fields, messages as the session file stores them. Pi's
``message_update`` lines carry the provider's latest ``usage`` and the streaming event
without its cumulative snapshot (``toolcall_start`` adds the call's ``id`` and
``toolName``). Records of ctxmodes' own (``context``, ``provider_request``, ``tool_call``,
``tool_result``, ``input``, ``command``, the hook-only points) write nothing.

ctxmodes' transports hand over text and thinking as deltas but a tool call whole, so the
stream rebuilds Pi's per-block events around them: ``text_start`` before a block's first
delta, ``text_end`` (with the block's text) when the next block starts or the message
ends, and ``toolcall_start``, one ``toolcall_delta`` with all the arguments, then
``toolcall_end`` for each call. Pi announces an answer at the transport's first event, so
the stream does too: an answer that fails before anything arrives starts with its final
message, as in Pi.

Not written, as ctxmodes has no record of it: Pi's ``bash_execution_update`` (RPC mode
writes those of its ``bash`` command itself).

Only what the session holds goes out (messages, tool arguments and results, error texts),
each as a JSON value: no request, header or credential is part of any record written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, BinaryIO

from ctxmodes.host import records
from ctxmodes.host.records import HostRecord
from ctxmodes.host.run_loop import zero_usage
from ctxmodes.providers.base import (
    ModelInfo,
    StreamEvent,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    UsageUpdate,
)
from ctxmodes.session.codec import dumps
from ctxmodes.session.models import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    CompactionEntry,
    SessionHeader,
    TextContent,
    ThinkingContent,
    to_json,
)

JsonObject = dict[str, Any]

#: Pi's usage of an answer nothing was reported for yet.
_ZERO_USAGE: JsonObject = to_json(zero_usage())


def header_line(header: SessionHeader) -> bytes:
    """The stream's first line: the session header, as in the session file."""
    return dumps(to_json(header)) + b"\n"


class _Answer:
    """The assistant message streaming now: what Pi's events about it need."""

    def __init__(self) -> None:
        self.announced = False
        self.usage: JsonObject = _ZERO_USAGE
        #: The block taking deltas: ``("text" | "thinking", content index)``.
        self.open_block: tuple[str, int] | None = None
        self.texts: dict[int, str] = {}


class JsonEventStream:
    """A host listener writing Pi's JSON event lines to ``out`` (flushed line by line, for a
    program reading them live).

    :param current_model: the model answering now (for the partial message Pi's
        ``message_start`` of an answer carries).
    :param now_ms: the clock of that partial message's ``timestamp``.
    """

    def __init__(
        self,
        out: BinaryIO,
        current_model: Callable[[], ModelInfo | None],
        now_ms: Callable[[], int],
    ) -> None:
        self._out = out
        self._current_model = current_model
        self._now_ms = now_ms
        self._answer: _Answer | None = None
        #: Arguments of the tools running, by call id: Pi repeats them in each update.
        self._tool_arguments: dict[str, dict[str, Any]] = {}

    def write_header(self, header: SessionHeader) -> None:
        self._out.write(header_line(header))
        self._out.flush()

    def __call__(self, record: HostRecord) -> None:
        for event in self.events_of(record):
            self._out.write(dumps(event) + b"\n")
        self._out.flush()

    def events_of(self, record: HostRecord) -> list[JsonObject]:
        """Pi's events for ``record``, in order (none for a record Pi has no event for)."""
        if isinstance(record, records.MessageStarted | records.MessageEnded) and isinstance(
            record.message, BashExecutionMessage
        ):
            # Pi records the user's shell commands without an event (recordBashResult).
            return []
        if isinstance(record, records.MessageStarted):
            if record.message is None:
                self._answer = _Answer()  # announced at its first stream event
                return []
            return [{"type": "message_start", "message": to_json(record.message)}]
        if isinstance(record, records.MessageUpdated):
            return self._updates(record.event)
        if isinstance(record, records.MessageEnded):
            return self._message_end(record.message)
        if isinstance(record, records.ToolExecutionStarted):
            self._tool_arguments[record.tool_call_id] = record.arguments
            return [
                {
                    "type": "tool_execution_start",
                    "toolCallId": record.tool_call_id,
                    "toolName": record.tool_name,
                    "args": record.arguments,
                }
            ]
        if isinstance(record, records.ToolExecutionUpdated):
            partial: JsonObject = {"content": [to_json(b) for b in record.partial.content]}
            if record.partial.details is not None:
                partial["details"] = record.partial.details
            return [
                {
                    "type": "tool_execution_update",
                    "toolCallId": record.tool_call_id,
                    "toolName": record.tool_name,
                    "args": self._tool_arguments.get(record.tool_call_id, {}),
                    "partialResult": partial,
                }
            ]
        if isinstance(record, records.ToolExecutionEnded):
            self._tool_arguments.pop(record.tool_call_id, None)
            stored = to_json(record.result)
            result = {key: stored[key] for key in ("content", "details") if key in stored}
            return [
                {
                    "type": "tool_execution_end",
                    "toolCallId": record.tool_call_id,
                    "toolName": record.tool_name,
                    "result": result,
                    "isError": record.is_error,
                }
            ]
        return _plain_event(record)

    def _updates(self, event: StreamEvent) -> list[JsonObject]:
        answer = self._answer if self._answer is not None else _Answer()
        self._answer = answer
        lines = self._announce(answer, None)
        pieces: list[JsonObject] = []
        if isinstance(event, UsageUpdate):
            answer.usage = to_json(event.usage)
        elif isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            if answer.open_block != (kind, event.content_index):
                pieces += _close_block(answer, None)
                pieces.append({"type": f"{kind}_start", "contentIndex": event.content_index})
                answer.open_block = (kind, event.content_index)
            answer.texts[event.content_index] = answer.texts.get(event.content_index, "")
            answer.texts[event.content_index] += event.delta
            pieces.append(
                {"type": f"{kind}_delta", "contentIndex": event.content_index, "delta": event.delta}
            )
        elif isinstance(event, ThinkingComplete):
            if answer.open_block != ("thinking", event.content_index):
                pieces += _close_block(answer, None)
                pieces.append({"type": "thinking_start", "contentIndex": event.content_index})
            answer.open_block = None
            pieces.append(
                {
                    "type": "thinking_end",
                    "contentIndex": event.content_index,
                    "content": event.block.thinking,
                }
            )
        elif isinstance(event, ToolCallComplete):
            pieces += _close_block(answer, None)
            call = event.tool_call
            at = event.content_index
            pieces += [
                {
                    "type": "toolcall_start",
                    "contentIndex": at,
                    "id": call.id,
                    "toolName": call.name,
                },
                {
                    "type": "toolcall_delta",
                    "contentIndex": at,
                    "delta": dumps(call.arguments).decode(),
                },
                {"type": "toolcall_end", "contentIndex": at, "toolCall": to_json(call)},
            ]
        # Terminal events end the message (message_end); transport retries are ctxmodes' own.
        return lines + [_update(answer.usage, piece) for piece in pieces]

    def _announce(self, answer: _Answer, final: AssistantMessage | None) -> list[JsonObject]:
        """Pi's ``message_start`` of an answer, once: the partial message, or the final one
        when nothing streamed before it ended."""
        if answer.announced:
            return []
        answer.announced = True
        message = to_json(final) if final is not None else self._partial_message()
        return [{"type": "message_start", "message": message}]

    def _partial_message(self) -> JsonObject:
        model = self._current_model()
        return {
            "role": "assistant",
            "content": [],
            "api": model.api if model else "unknown",
            "provider": model.provider if model else "unknown",
            "model": model.id if model else "unknown",
            "usage": _ZERO_USAGE,
            "stopReason": "pending",
            "timestamp": self._now_ms(),
        }

    def _message_end(self, message: AgentMessage) -> list[JsonObject]:
        lines: list[JsonObject] = []
        answer, self._answer = self._answer, None
        if isinstance(message, AssistantMessage) and answer is not None:
            lines += self._announce(answer, message)
            usage = to_json(message.usage)
            lines += [_update(usage, piece) for piece in _close_block(answer, message)]
        return [*lines, {"type": "message_end", "message": to_json(message)}]


def _close_block(answer: _Answer, final: AssistantMessage | None) -> list[JsonObject]:
    """The ``*_end`` event of the block taking deltas, if any, with its whole text."""
    if answer.open_block is None:
        return []
    kind, at = answer.open_block
    answer.open_block = None
    text = answer.texts.get(at, "")
    if final is not None and at < len(final.content):
        block = final.content[at]
        if isinstance(block, TextContent):
            text = block.text
        elif isinstance(block, ThinkingContent):
            text = block.thinking
    return [{"type": f"{kind}_end", "contentIndex": at, "content": text}]


def _update(usage: JsonObject, event: JsonObject) -> JsonObject:
    return {"type": "message_update", "usage": usage, "assistantMessageEvent": event}


def _plain_event(record: HostRecord) -> list[JsonObject]:
    """The events whose JSON is the record's fields under Pi's names."""
    if isinstance(record, records.AgentStarted | records.TurnStarted | records.AgentSettled):
        return [{"type": record.type}]
    if isinstance(record, records.AgentEnded):
        messages = [to_json(message) for message in record.messages]
        return [{"type": "agent_end", "messages": messages, "willRetry": record.will_retry}]
    if isinstance(record, records.TurnEnded):
        results = [to_json(result) for result in record.tool_results]
        return [{"type": "turn_end", "message": to_json(record.message), "toolResults": results}]
    if isinstance(record, records.SessionInfoChanged):
        named: JsonObject = {"type": "session_info_changed"}
        if record.name is not None:
            named["name"] = record.name
        return [named]
    if isinstance(record, records.QueueUpdated):
        steering, follow_up = list(record.steering), list(record.follow_up)
        return [{"type": "queue_update", "steering": steering, "followUp": follow_up}]
    if isinstance(record, records.ThinkingLevelChanged):
        return [{"type": "thinking_level_changed", "level": record.level}]
    if isinstance(record, records.CompactionStarted):
        return [{"type": "compaction_start", "reason": record.trigger}]
    if isinstance(record, records.CompactionEnded):
        return [_compaction_end(record)]
    if isinstance(record, records.AutoRetryStarted):
        return [
            {
                "type": "auto_retry_start",
                "attempt": record.attempt,
                "maxAttempts": record.max_attempts,
                "delayMs": record.delay_ms,
                "errorMessage": record.error_message,
            }
        ]
    if isinstance(record, records.AutoRetryEnded):
        ended: JsonObject = {"type": "auto_retry_end", "success": record.success}
        ended["attempt"] = record.attempt
        if record.final_error is not None:
            ended["finalError"] = record.final_error
        return [ended]
    if isinstance(record, records.SummarizationRetryScheduled):
        return [
            {
                "type": "summarization_retry_scheduled",
                "attempt": record.attempt,
                "maxAttempts": record.max_attempts,
                "delayMs": record.delay_ms,
                "errorMessage": record.error_message,
            }
        ]
    if isinstance(record, records.SummarizationRetryAttemptStarted):
        started: JsonObject = {"type": "summarization_retry_attempt_start", "source": record.source}
        if record.reason is not None:
            started["reason"] = record.reason
        return [started]
    if isinstance(record, records.SummarizationRetryFinished):
        return [{"type": "summarization_retry_finished"}]
    if isinstance(record, records.EntryAppended):
        return [{"type": "entry_appended", "entry": record.entry}]
    return []


def _compaction_end(record: records.CompactionEnded) -> JsonObject:
    event: JsonObject = {"type": "compaction_end", "reason": record.trigger}
    if record.entry is not None:
        event["result"] = compaction_result(record.entry, record.estimated_tokens_after)
    event["aborted"] = record.aborted
    event["willRetry"] = record.will_retry
    if record.error is not None:
        event["errorMessage"] = record.error
    return event


def compaction_result(entry: CompactionEntry, estimated_tokens_after: int | None) -> JsonObject:
    """Pi's ``CompactionResult`` of a compaction entry (the summary and what it kept) and the
    estimated size of the context it left."""
    stored = to_json(entry)
    result: JsonObject = {
        "summary": entry.summary,
        "firstKeptEntryId": entry.first_kept_entry_id,
        "tokensBefore": entry.tokens_before,
    }
    if estimated_tokens_after is not None:
        result["estimatedTokensAfter"] = estimated_tokens_after
    for key in ("usage", "details"):
        if key in stored:
            result[key] = stored[key]
    return result
