"""What session listeners receive: one small record per lifecycle event, in the order the
events happen.

Hooks are for plugins; listeners are for observers (a transcript printer, a request trace,
tests asserting the exact event order). Listeners see every hook point plus the events that
have no hook (``message_start``/``message_update``, ``tool_execution_*``, ``queue_update``,
``compaction_*``), always *after* the hook implementations of that point ran. A listener
must not block: it runs on the host's thread, inside the run.

Each record's ``type`` names the event with Pi's event names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ctxmodes.events import (
        CompactionTrigger,
        InputSource,
        SessionShutdownReason,
        SessionStartReason,
    )
    from ctxmodes.providers.base import ModelRequest, StreamEvent, TransportRetry
    from ctxmodes.session.models import (
        AgentMessage,
        AssistantMessage,
        BranchSummaryEntry,
        CompactionEntry,
        ToolResultMessage,
    )
    from ctxmodes.tools.base import ToolResult


@dataclass(frozen=True, slots=True)
class SessionStarted:
    type: ClassVar[str] = "session_start"
    reason: SessionStartReason


@dataclass(frozen=True, slots=True)
class SessionShutdown:
    type: ClassVar[str] = "session_shutdown"
    reason: SessionShutdownReason


@dataclass(frozen=True, slots=True)
class EntryAppended:
    """A plugin appended a custom entry (``HostSession.append_entry``, Pi's
    ``appendEntry``); ``entry`` is the entry as the session file stores it."""

    type: ClassVar[str] = "entry_appended"
    entry: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionInfoChanged:
    """The session was named (a ``session_info`` entry); ``name`` is the name it has now."""

    type: ClassVar[str] = "session_info_changed"
    name: str | None


@dataclass(frozen=True, slots=True)
class InputReceived:
    """Text reached ``ctx_input``; ``action`` is what the plugins decided."""

    type: ClassVar[str] = "input"
    text: str
    source: InputSource
    streaming_behavior: str | None
    action: str  # "continue" | "handled" | "transform"


@dataclass(frozen=True, slots=True)
class CommandInvoked:
    type: ClassVar[str] = "command"
    name: str
    args: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class QueueUpdated:
    """The texts waiting as steering and follow-up messages changed."""

    type: ClassVar[str] = "queue_update"
    steering: tuple[str, ...]
    follow_up: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ThinkingLevelChanged:
    """The level the next request asks for changed, by a model or level switch (Pi emits
    ``thinking_level_changed`` where its ``setThinkingLevel`` changes the level)."""

    type: ClassVar[str] = "thinking_level_changed"
    level: str


@dataclass(frozen=True, slots=True)
class AgentStarted:
    type: ClassVar[str] = "agent_start"


@dataclass(frozen=True, slots=True)
class TurnStarted:
    type: ClassVar[str] = "turn_start"
    turn_index: int


@dataclass(frozen=True, slots=True)
class ContextProjected:
    """``ctx_project_context`` ran; ``message_count`` messages go on to the model."""

    type: ClassVar[str] = "context"
    message_count: int


@dataclass(frozen=True, slots=True)
class ProviderRequested:
    """A request is about to reach the model, exactly as it will be sent (after
    ``ctx_provider_request`` for turns; summarization requests have no hook)."""

    type: ClassVar[str] = "provider_request"
    request: ModelRequest
    transport: str


@dataclass(frozen=True, slots=True)
class MessageStarted:
    """A message begins: a prompt or tool result (``message`` set), or an assistant
    response about to stream (``message`` is ``None``)."""

    type: ClassVar[str] = "message_start"
    role: str
    message: AgentMessage | None


@dataclass(frozen=True, slots=True)
class MessageUpdated:
    """A piece of the streaming assistant response."""

    type: ClassVar[str] = "message_update"
    event: StreamEvent


@dataclass(frozen=True, slots=True)
class MessageEnded:
    """A message is complete and persisted as entry ``entry_id``."""

    type: ClassVar[str] = "message_end"
    message: AgentMessage
    entry_id: str | None


@dataclass(frozen=True, slots=True)
class ToolExecutionStarted:
    type: ClassVar[str] = "tool_execution_start"
    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallChecked:
    """``ctx_tool_call`` ran; ``blocked`` holds the reason when a plugin refused the call."""

    type: ClassVar[str] = "tool_call"
    tool_call_id: str
    tool_name: str
    blocked: str | None


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdated:
    type: ClassVar[str] = "tool_execution_update"
    tool_call_id: str
    tool_name: str
    partial: ToolResult


@dataclass(frozen=True, slots=True)
class ToolResultChecked:
    """``ctx_tool_result`` ran; ``result`` is what will be persisted."""

    type: ClassVar[str] = "tool_result"
    tool_call_id: str
    tool_name: str
    result: ToolResultMessage


@dataclass(frozen=True, slots=True)
class ToolExecutionEnded:
    type: ClassVar[str] = "tool_execution_end"
    tool_call_id: str
    tool_name: str
    result: ToolResultMessage
    is_error: bool


@dataclass(frozen=True, slots=True)
class TurnEnded:
    type: ClassVar[str] = "turn_end"
    turn_index: int
    message: AssistantMessage
    tool_results: tuple[ToolResultMessage, ...]


@dataclass(frozen=True, slots=True)
class AgentEnded:
    """The run loop stopped; ``messages`` are the ones this run added. ``will_retry``: the
    last answer failed in a way the retry series will retry (Pi's ``willRetry``)."""

    type: ClassVar[str] = "agent_end"
    messages: tuple[AgentMessage, ...]
    will_retry: bool = False


@dataclass(frozen=True, slots=True)
class AgentSettled:
    type: ClassVar[str] = "agent_settled"


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    type: ClassVar[str] = "compaction_start"
    trigger: CompactionTrigger


@dataclass(frozen=True, slots=True)
class CompactionPrepared:
    """``ctx_session_before_compact`` ran: ``cancelled``, or ``supplied`` when a plugin gave
    the summary (no summarization call follows)."""

    type: ClassVar[str] = "session_before_compact"
    trigger: CompactionTrigger
    cancelled: bool
    supplied: bool


@dataclass(frozen=True, slots=True)
class CompactionAppended:
    """The compaction entry was appended and ``ctx_session_compact`` ran."""

    type: ClassVar[str] = "session_compact"
    entry: CompactionEntry
    from_plugin: bool


@dataclass(frozen=True, slots=True)
class CompactionEnded:
    """A compaction finished: ``entry`` on success, else ``aborted`` or ``error``.

    :ivar estimated_tokens_after: on success, the estimated tokens of the context the
        compaction left (Pi's ``estimatedTokensAfter``).
    """

    type: ClassVar[str] = "compaction_end"
    trigger: CompactionTrigger
    entry: CompactionEntry | None
    aborted: bool = False
    error: str | None = None
    will_retry: bool = False
    estimated_tokens_after: int | None = None


@dataclass(frozen=True, slots=True)
class AutoRetryStarted:
    """A turn failed on a transient error; the host waits ``delay_ms``, then retries."""

    type: ClassVar[str] = "auto_retry_start"
    attempt: int
    max_attempts: int
    delay_ms: float
    error_message: str


@dataclass(frozen=True, slots=True)
class AutoRetryEnded:
    """A retry series ended: an answer came (``success``), or the failure stands."""

    type: ClassVar[str] = "auto_retry_end"
    success: bool
    attempt: int
    final_error: str | None = None


@dataclass(frozen=True, slots=True)
class TransportRetryScheduled:
    """The model transport resends a request that failed before any answer (Pi's
    ``retry.provider``, off by default); the same assistant message continues."""

    type: ClassVar[str] = "transport_retry"
    attempt: int
    max_attempts: int
    delay_ms: float
    error_message: str

    @classmethod
    def of(cls, retry: TransportRetry) -> TransportRetryScheduled:
        return cls(retry.attempt, retry.max_attempts, retry.delay_ms, retry.error)


@dataclass(frozen=True, slots=True)
class SummarizationRetryScheduled:
    """A compaction or branch-summary call failed on a transient error; it is retried
    after ``delay_ms``."""

    type: ClassVar[str] = "summarization_retry_scheduled"
    attempt: int
    max_attempts: int
    delay_ms: float
    error_message: str


@dataclass(frozen=True, slots=True)
class SummarizationRetryAttemptStarted:
    """The wait after a failed summarization call is over and the call is made again;
    ``source`` is Pi's name of what it summarizes (``compaction``, with the compaction's
    ``reason``, or ``branchSummary``)."""

    type: ClassVar[str] = "summarization_retry_attempt_start"
    source: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class SummarizationRetryFinished:
    type: ClassVar[str] = "summarization_retry_finished"
    success: bool
    attempt: int


@dataclass(frozen=True, slots=True)
class TreeNavigationStarted:
    """``ctx_session_before_tree`` ran; ``cancelled`` when a plugin cancelled."""

    type: ClassVar[str] = "session_before_tree"
    target_id: str
    old_leaf_id: str | None
    cancelled: bool


@dataclass(frozen=True, slots=True)
class TreeNavigated:
    type: ClassVar[str] = "session_tree"
    old_leaf_id: str | None
    new_leaf_id: str | None
    summary_entry: BranchSummaryEntry | None
    internal: bool
    editor_text: str | None = None


HostRecord = (
    SessionStarted
    | SessionShutdown
    | SessionInfoChanged
    | EntryAppended
    | InputReceived
    | CommandInvoked
    | QueueUpdated
    | ThinkingLevelChanged
    | AgentStarted
    | TurnStarted
    | ContextProjected
    | ProviderRequested
    | MessageStarted
    | MessageUpdated
    | MessageEnded
    | ToolExecutionStarted
    | ToolCallChecked
    | ToolExecutionUpdated
    | ToolResultChecked
    | ToolExecutionEnded
    | TurnEnded
    | AgentEnded
    | AgentSettled
    | CompactionStarted
    | CompactionPrepared
    | CompactionAppended
    | CompactionEnded
    | AutoRetryStarted
    | AutoRetryEnded
    | TransportRetryScheduled
    | SummarizationRetryScheduled
    | SummarizationRetryAttemptStarted
    | SummarizationRetryFinished
    | TreeNavigationStarted
    | TreeNavigated
)

Listener = Callable[[HostRecord], None]
