"""Host records as Pi's JSON event lines, for the events a loopback run of both programs
does not reach. Each expected shape is read from Pi's ``AgentSession`` (``_emitQueueUpdate``,
``_runAutoCompaction``/``compact``, ``_handleRetryableError``, ``setThinkingLevel``, the
summarization retry callbacks) and pi-ai's ``AssistantMessageEvent``."""

from __future__ import annotations

import io
import json
from typing import Any

from ctxmodes.host import records
from ctxmodes.host.json_stream import JsonEventStream
from ctxmodes.host.records import HostRecord
from ctxmodes.providers.base import (
    ModelInfo,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    UsageUpdate,
)
from ctxmodes.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionEntry,
    Cost,
    SessionHeader,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from ctxmodes.tools.base import ToolResult

MODEL = ModelInfo(provider="loop", api="openai-completions", id="m")
USAGE = Usage(
    input=5,
    output=2,
    cache_read=0,
    cache_write=0,
    total_tokens=7,
    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
)


def _lines(*items: HostRecord) -> list[dict[str, Any]]:
    out = io.BytesIO()
    stream = JsonEventStream(out, lambda: MODEL, lambda: 1000)
    for record in items:
        stream(record)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_queue_update_carries_both_queues() -> None:
    assert _lines(records.QueueUpdated(("steer",), ("later", "after"))) == [
        {"type": "queue_update", "steering": ["steer"], "followUp": ["later", "after"]}
    ]


def test_a_thinking_level_change_is_pis_event() -> None:
    # Pi's setThinkingLevel: {type: "thinking_level_changed", level: effectiveLevel}.
    assert _lines(records.ThinkingLevelChanged("high")) == [
        {"type": "thinking_level_changed", "level": "high"}
    ]


def test_a_compaction_starts_and_ends_with_its_result() -> None:
    entry = CompactionEntry(
        id="c1",
        parent_id="e9",
        timestamp="2026-01-01T00:00:00.000Z",
        summary="what happened",
        first_kept_entry_id="e5",
        tokens_before=1234,
        details={"readFiles": ["a.py"]},
    )
    lines = _lines(
        records.CompactionStarted("threshold"),
        records.CompactionEnded("threshold", entry, will_retry=False, estimated_tokens_after=321),
    )
    assert lines == [
        {"type": "compaction_start", "reason": "threshold"},
        {
            "type": "compaction_end",
            "reason": "threshold",
            "result": {
                "summary": "what happened",
                "firstKeptEntryId": "e5",
                "tokensBefore": 1234,
                "estimatedTokensAfter": 321,
                "details": {"readFiles": ["a.py"]},
            },
            "aborted": False,
            "willRetry": False,
        },
    ]


def test_a_failed_or_aborted_compaction_has_no_result() -> None:
    failed = records.CompactionEnded("overflow", None, error="Context overflow recovery failed: x")
    aborted = records.CompactionEnded("manual", None, aborted=True)
    assert _lines(failed, aborted) == [
        {
            "type": "compaction_end",
            "reason": "overflow",
            "aborted": False,
            "willRetry": False,
            "errorMessage": "Context overflow recovery failed: x",
        },
        {"type": "compaction_end", "reason": "manual", "aborted": True, "willRetry": False},
    ]


def test_retry_events_use_pis_field_names() -> None:
    lines = _lines(
        records.AutoRetryStarted(attempt=1, max_attempts=3, delay_ms=2000, error_message="503"),
        records.AutoRetryEnded(success=True, attempt=1),
        records.AutoRetryEnded(success=False, attempt=3, final_error="503"),
        records.SummarizationRetryScheduled(
            attempt=1, max_attempts=3, delay_ms=2000, error_message="overloaded"
        ),
        records.SummarizationRetryAttemptStarted("compaction", "threshold"),
        records.SummarizationRetryAttemptStarted("branchSummary"),
        records.SummarizationRetryFinished(success=True, attempt=1),
    )
    assert lines == [
        {
            "type": "auto_retry_start",
            "attempt": 1,
            "maxAttempts": 3,
            "delayMs": 2000,
            "errorMessage": "503",
        },
        {"type": "auto_retry_end", "success": True, "attempt": 1},
        {"type": "auto_retry_end", "success": False, "attempt": 3, "finalError": "503"},
        {
            "type": "summarization_retry_scheduled",
            "attempt": 1,
            "maxAttempts": 3,
            "delayMs": 2000,
            "errorMessage": "overloaded",
        },
        # Pi's {type, ...source}: the compaction's reason, none for a branch summary.
        {
            "type": "summarization_retry_attempt_start",
            "source": "compaction",
            "reason": "threshold",
        },
        {"type": "summarization_retry_attempt_start", "source": "branchSummary"},
        {"type": "summarization_retry_finished"},
    ]


def test_naming_the_session_is_pis_session_info_changed() -> None:
    # AgentSession.setSessionName: {type, name: sessionManager.getSessionName()}, the name
    # left out when the session has none.
    assert _lines(records.SessionInfoChanged("release prep"), records.SessionInfoChanged(None)) == [
        {"type": "session_info_changed", "name": "release prep"},
        {"type": "session_info_changed"},
    ]


def test_agent_end_says_whether_it_will_be_retried() -> None:
    assert _lines(records.AgentEnded((), will_retry=True)) == [
        {"type": "agent_end", "messages": [], "willRetry": True}
    ]


def test_records_pi_has_no_event_for_write_nothing() -> None:
    assert (
        _lines(
            records.ContextProjected(3),
            records.ToolCallChecked("call_1", "read", None),
            records.InputReceived("hi", "interactive", None, "continue"),
            records.CommandInvoked("name", ""),
            records.TransportRetryScheduled(1, 3, 100, "reset"),
        )
        == []
    )


def test_tool_updates_repeat_the_arguments_pi_sends_with_them() -> None:
    lines = _lines(
        records.ToolExecutionStarted("call_1", "bash", {"command": "ls"}),
        records.ToolExecutionUpdated("call_1", "bash", ToolResult.text("a.py\n")),
    )
    assert lines[1] == {
        "type": "tool_execution_update",
        "toolCallId": "call_1",
        "toolName": "bash",
        "args": {"command": "ls"},
        "partialResult": {"content": [{"type": "text", "text": "a.py\n"}]},
    }


def test_thinking_text_and_tool_call_blocks_get_pis_start_and_end_events() -> None:
    call = ToolCall(id="call_1", name="read", arguments={"path": "a.py"})
    final = AssistantMessage(
        content=[ThinkingContent(thinking="hm"), TextContent(text="Reading."), call],
        api="openai-completions",
        provider="loop",
        model="m",
        usage=USAGE,
        stop_reason="toolUse",
        timestamp=1000,
    )
    lines = _lines(
        records.MessageStarted("assistant", None),
        records.MessageUpdated(ThinkingDelta(0, "hm")),
        records.MessageUpdated(ThinkingComplete(0, ThinkingContent(thinking="hm"))),
        records.MessageUpdated(TextDelta(1, "Reading.")),
        records.MessageUpdated(UsageUpdate(USAGE)),
        records.MessageUpdated(ToolCallComplete(2, call)),
        records.MessageEnded(final, "e1"),
    )
    assert lines[0]["type"] == "message_start"
    assert lines[0]["message"]["stopReason"] == "pending"
    assert lines[0]["message"]["provider"] == "loop"
    updates = [line["assistantMessageEvent"] for line in lines[1:-1]]
    assert [update["type"] for update in updates] == [
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
    ]
    assert updates[2] == {"type": "thinking_end", "contentIndex": 0, "content": "hm"}
    assert updates[5] == {"type": "text_end", "contentIndex": 1, "content": "Reading."}
    assert updates[6] == {
        "type": "toolcall_start",
        "contentIndex": 2,
        "id": "call_1",
        "toolName": "read",
    }
    assert json.loads(updates[7]["delta"]) == {"path": "a.py"}
    # No partial snapshot; usage as the provider last reported it.
    assert all(set(line) == {"type", "usage", "assistantMessageEvent"} for line in lines[1:-1])
    assert lines[-2]["usage"]["totalTokens"] == 7
    assert lines[-1]["type"] == "message_end"


def test_an_answer_failing_before_any_event_starts_with_its_final_message() -> None:
    failed = AssistantMessage(
        content=[],
        api="openai-completions",
        provider="loop",
        model="m",
        usage=USAGE,
        stop_reason="error",
        error_message="400: bad",
        timestamp=1000,
    )
    lines = _lines(records.MessageStarted("assistant", None), records.MessageEnded(failed, "e1"))
    assert [line["type"] for line in lines] == ["message_start", "message_end"]
    assert lines[0]["message"] == lines[1]["message"]
    assert lines[0]["message"]["errorMessage"] == "400: bad"


def test_the_header_line_is_the_session_files() -> None:
    out = io.BytesIO()
    header = SessionHeader(version=3, id="s1", timestamp="2026-01-01T00:00:00.000Z", cwd="/w")
    JsonEventStream(out, lambda: MODEL, lambda: 1000).write_header(header)
    assert json.loads(out.getvalue()) == {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/w",
    }


def test_a_users_shell_command_makes_no_event() -> None:
    # Pi's recordBashResult appends the message without emitting anything.
    message = BashExecutionMessage(
        command="ls", output="a\n", exit_code=0, cancelled=False, truncated=False, timestamp=1
    )
    started = records.MessageStarted(message.role, message)
    assert _lines(started, records.MessageEnded(message, "e1")) == []
