"""A session's statistics, counted as Pi's ``AgentSession.getSessionStats`` counts them.

Messages, tool calls and tokens are counted over every entry of the file, other branches
and what compactions replaced included, so the totals are what was billed; the usage of
summaries (compactions, branch summaries) and of tool results that report one counts too.
The context usage is the current context's size (Pi's ``getContextUsage``): the last usage
an answer reported plus estimates of what came after it, unknown (``None``) after a
compaction until an answer reports again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxmodes.compaction.tokens import Number, calculate_context_tokens, estimate_context_tokens
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import (
    AgentMessage,
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    MessageEntry,
    SessionEntry,
    ToolCall,
    ToolResultMessage,
    Usage,
)


@dataclass(frozen=True, slots=True)
class TokenTotals:
    input: Number = 0
    output: Number = 0
    cache_read: Number = 0
    cache_write: Number = 0
    cost: Number = 0

    def plus(self, usage: Usage) -> TokenTotals:
        return TokenTotals(
            self.input + usage.input,
            self.output + usage.output,
            self.cache_read + usage.cache_read,
            self.cache_write + usage.cache_write,
            self.cost + usage.cost.total,
        )

    @property
    def total(self) -> Number:
        return self.input + self.output + self.cache_read + self.cache_write


def billed_usage(entry: SessionEntry) -> Usage | None:
    """What ``entry`` was billed for, as Pi counts it: a reply's usage (a failed or stopped
    one's too), a tool result's that reports one, a compaction's or branch summary's."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, AssistantMessage | ToolResultMessage):
            return message.usage
        return None
    if isinstance(entry, CompactionEntry | BranchSummaryEntry):
        return entry.usage
    return None


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """:ivar tokens: the context's size, ``None`` while unknown (after a compaction).
    :ivar percent: ``tokens`` in percent of ``context_window``."""

    tokens: Number | None
    context_window: int
    percent: float | None


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Pi's ``SessionStats``; ``context_usage`` is ``None`` without a model or a known
    context window."""

    session_file: str | None
    session_id: str
    user_messages: int
    assistant_messages: int
    tool_calls: int
    tool_results: int
    total_messages: int
    tokens: TokenTotals
    context_usage: ContextUsage | None


def session_stats(
    manager: SessionManager, messages: Sequence[AgentMessage], context_window: int | None
) -> SessionStats:
    """The statistics of the session ``manager`` stores, whose current context is
    ``messages``, for a model with ``context_window`` (``None``: no model)."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    total_messages = tool_calls = 0
    totals = TokenTotals()
    for entry in manager.get_entries():
        usage = billed_usage(entry)
        if usage is not None:
            totals = totals.plus(usage)
        if not isinstance(entry, MessageEntry):
            continue
        total_messages += 1
        message = entry.message
        role = getattr(message, "role", None)
        if isinstance(role, str) and role in counts:
            counts[role] += 1
        if isinstance(message, AssistantMessage):
            tool_calls += sum(isinstance(block, ToolCall) for block in message.content)
    file = manager.session_file
    return SessionStats(
        session_file=None if file is None else str(file),
        session_id=manager.session_id,
        user_messages=counts["user"],
        assistant_messages=counts["assistant"],
        tool_calls=tool_calls,
        tool_results=counts["toolResult"],
        total_messages=total_messages,
        tokens=totals,
        context_usage=_context_usage(manager.get_branch(), messages, context_window),
    )


def _context_usage(
    branch: Sequence[SessionEntry], messages: Sequence[AgentMessage], context_window: int | None
) -> ContextUsage | None:
    if not context_window or context_window <= 0:
        return None
    compacted_at = next(
        (at for at in range(len(branch) - 1, -1, -1) if isinstance(branch[at], CompactionEntry)),
        None,
    )
    if compacted_at is not None and not any(
        _reports_context(entry) for entry in branch[compacted_at + 1 :]
    ):
        # The usages before the compaction measured a context that is gone.
        return ContextUsage(None, context_window, None)
    tokens = estimate_context_tokens(messages).tokens
    return ContextUsage(tokens, context_window, tokens / context_window * 100)


def _reports_context(entry: SessionEntry) -> bool:
    """Whether ``entry`` is an answer whose usage measures its context."""
    if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
        return False
    answer = entry.message
    return (
        answer.stop_reason not in ("aborted", "error")
        and calculate_context_tokens(answer.usage) > 0
    )
