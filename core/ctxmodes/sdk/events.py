"""The events programs receive: the one vocabulary of what an agent does, for the terminal,
an embedding program and the demo alike.

The host speaks in lifecycle records (:mod:`ctxmodes.host.records`), one per hook point. They
are projected onto these events once, here: :data:`PROJECTION` declares, for every record
type, the events it stands for, and :data:`UNPROJECTED` the record types no program needs
(they serve traces and the host's own tests); a test holds that every record type is in
exactly one of them. :data:`FROM_THE_INTERFACE` are the events the agent's user interface
emits itself. Raw records remain available through
:meth:`ctxmodes.sdk.Agent.subscribe_records` for programs that need every hook point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ctxmodes.compaction.tokens import calculate_context_tokens
from ctxmodes.host import records
from ctxmodes.providers.base import TextDelta, ThinkingDelta
from ctxmodes.session.models import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    TextContent,
)
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE

if TYPE_CHECKING:
    from ctxmodes.host.records import HostRecord
    from ctxmodes.hostapi import NotifyLevel
    from ctxmodes.providers.base import ModelRequest
    from ctxmodes.session.models import AgentMessage, CompactionEntry


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A top-level run began (a prompt, a queued message, a custom message)."""

    type: ClassVar[str] = "run_start"


@dataclass(frozen=True, slots=True)
class RunSettled:
    """The run is over and everything it wrote is persisted; the session is idle."""

    type: ClassVar[str] = "run_settled"


@dataclass(frozen=True, slots=True)
class AssistantStarted:
    """The model began streaming a reply."""

    type: ClassVar[str] = "assistant_start"


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    """A piece of the reply's text (``thinking`` for reasoning text)."""

    type: ClassVar[str] = "text_delta"
    text: str
    thinking: bool = False


@dataclass(frozen=True, slots=True)
class MessageFinished:
    """A message ended and was persisted as ``entry_id`` (any role)."""

    type: ClassVar[str] = "message"
    message: AgentMessage
    entry_id: str | None


@dataclass(frozen=True, slots=True)
class ToolStarted:
    type: ClassVar[str] = "tool_start"
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolUpdated:
    """A running tool call reported progress; ``text`` is its output so far (for ``bash``,
    the tail of what the command printed)."""

    type: ClassVar[str] = "tool_update"
    call_id: str
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call's result; ``text`` is its text content joined, ``diff`` the display diff
    an ``edit`` reports (Pi's ``details.diff``), when there is one, and ``details`` the
    result's details as the tool gave them (Pi's shape for the core's tools)."""

    type: ClassVar[str] = "tool_end"
    call_id: str
    name: str
    text: str
    is_error: bool
    diff: str | None = None
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class UsageReported:
    """The model reported usage: ``context_tokens`` is the size of the request it answered."""

    type: ClassVar[str] = "usage"
    context_tokens: int
    cost: float


@dataclass(frozen=True, slots=True)
class ModelError:
    """A reply ended with an error (``aborted`` when the user stopped it)."""

    type: ClassVar[str] = "model_error"
    message: str
    aborted: bool


@dataclass(frozen=True, slots=True)
class WindowOpened:
    """A context-window marker opened window ``number`` (a rollover when ``number > 0``)."""

    type: ClassVar[str] = "window_opened"
    number: int


@dataclass(frozen=True, slots=True)
class QueueChanged:
    type: ClassVar[str] = "queue"
    steering: tuple[str, ...]
    follow_up: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    type: ClassVar[str] = "compaction_start"
    trigger: str


@dataclass(frozen=True, slots=True)
class CompactionFinished:
    """``entry`` on success; otherwise ``aborted`` or ``error``."""

    type: ClassVar[str] = "compaction_end"
    entry: CompactionEntry | None
    aborted: bool
    error: str | None
    trigger: str = "manual"


@dataclass(frozen=True, slots=True)
class RequestSent:
    """A turn's request went to the model, as the modes shaped it (what ``/context`` shows)."""

    type: ClassVar[str] = "request"
    request: ModelRequest


@dataclass(frozen=True, slots=True)
class SummaryStarted:
    """A branch summary is being generated (a navigation with a summary, Tree's rollover)."""

    type: ClassVar[str] = "summary_start"


@dataclass(frozen=True, slots=True)
class Navigated:
    """The leaf moved; ``internal`` for a mode's own move (Tree's rollover)."""

    type: ClassVar[str] = "navigated"
    old_leaf_id: str | None
    new_leaf_id: str | None
    summarized: bool
    internal: bool


@dataclass(frozen=True, slots=True)
class SessionChanged:
    """A session started: at start-up, or replacing the previous one (``/new`` ...)."""

    type: ClassVar[str] = "session"
    reason: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A message for the user (a command's answer, a plugin's warning, a failed rollover)."""

    type: ClassVar[str] = "notice"
    message: str
    level: NotifyLevel


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """A reply failed on a transient error: attempt ``attempt`` of ``max_attempts`` starts
    after ``delay_ms`` (``abort`` cancels the wait)."""

    type: ClassVar[str] = "retry_scheduled"
    attempt: int
    max_attempts: int
    delay_ms: float
    error: str


@dataclass(frozen=True, slots=True)
class TransportRetryScheduled:
    """A request failed before any answer and the transport resends it after ``delay_ms``
    (attempt ``attempt`` of ``max_attempts``); the reply being written continues."""

    type: ClassVar[str] = "transport_retry"
    attempt: int
    max_attempts: int
    delay_ms: float
    error: str


@dataclass(frozen=True, slots=True)
class RetryEnded:
    """The retries ended: an answer came (``success``), or ``error`` stands; ``attempt``
    is the last attempt made (0: the failure was not retried)."""

    type: ClassVar[str] = "retry_end"
    success: bool
    error: str | None
    attempt: int


@dataclass(frozen=True, slots=True)
class StatusChanged:
    """A plugin set (or, with ``None``, cleared) its status text."""

    type: ClassVar[str] = "status"
    key: str
    text: str | None


AgentEvent = (
    RunStarted
    | RunSettled
    | AssistantStarted
    | TextDeltaEvent
    | MessageFinished
    | ToolStarted
    | ToolUpdated
    | ToolFinished
    | UsageReported
    | ModelError
    | WindowOpened
    | QueueChanged
    | CompactionStarted
    | CompactionFinished
    | RequestSent
    | SummaryStarted
    | Navigated
    | SessionChanged
    | Notice
    | StatusChanged
    | RetryScheduled
    | TransportRetryScheduled
    | RetryEnded
)

EventListener = Callable[[AgentEvent], None]


def message_text(message: AgentMessage) -> str:
    """The text blocks of a message, joined with newlines."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.text for block in content if isinstance(block, TextContent))
    return ""


def image_types(message: AgentMessage) -> list[str]:
    """The MIME type of each image block of a message, in order."""
    content = getattr(message, "content", "")
    if not isinstance(content, list):
        return []
    return [block.mime_type for block in content if isinstance(block, ImageContent)]


def window_number(message: AgentMessage) -> int | None:
    """The window a marker message opens (``None`` for other messages and for reminders)."""
    if not isinstance(message, CustomMessage) or message.custom_type != CONTEXT_WINDOW_CUSTOM_TYPE:
        return None
    details = message.details if isinstance(message.details, dict) else {}
    management = details.get("contextManagement")
    if not isinstance(management, dict) or management.get("kind") != "window":
        return None
    number = management.get("windowNumber")
    return number if isinstance(number, int) else None


def translate(record: HostRecord) -> list[AgentEvent]:
    """The events one host record stands for, in order."""
    project = PROJECTION.get(type(record))
    return project(record) if project is not None else []


def _delta(record: records.MessageUpdated) -> list[AgentEvent]:
    event = record.event
    if isinstance(event, TextDelta):
        return [TextDeltaEvent(event.delta)]
    if isinstance(event, ThinkingDelta):
        return [TextDeltaEvent(event.delta, thinking=True)]
    return []


def _message_events(record: records.MessageEnded) -> list[AgentEvent]:
    message = record.message
    events: list[AgentEvent] = [MessageFinished(message, record.entry_id)]
    if isinstance(message, AssistantMessage):
        if message.stop_reason in ("error", "aborted"):
            text = message.error_message or message.stop_reason
            events.append(ModelError(text, aborted=message.stop_reason == "aborted"))
        else:
            tokens = int(calculate_context_tokens(message.usage))
            events.append(UsageReported(tokens, float(message.usage.cost.total)))
    number = window_number(message)
    if number is not None:
        events.append(WindowOpened(number))
    return events


def _request(record: records.ProviderRequested) -> list[AgentEvent]:
    purpose = record.request.purpose
    if purpose == "turn":
        return [RequestSent(record.request)]
    return [SummaryStarted()] if purpose == "branch_summary" else []


def _tool_updated(record: records.ToolExecutionUpdated) -> list[AgentEvent]:
    partial = "\n".join(
        block.text for block in record.partial.content if isinstance(block, TextContent)
    )
    return [ToolUpdated(record.tool_call_id, record.tool_name, partial)]


def _tool_finished(record: records.ToolExecutionEnded) -> list[AgentEvent]:
    text = message_text(record.result)
    details = record.result.details
    diff = details.get("diff") if isinstance(details, dict) else None
    shown = diff if isinstance(diff, str) and diff else None
    kept = details if isinstance(details, dict) else None
    return [ToolFinished(record.tool_call_id, record.tool_name, text, record.is_error, shown, kept)]


def _navigated(record: records.TreeNavigated) -> list[AgentEvent]:
    summarized = record.summary_entry is not None
    return [Navigated(record.old_leaf_id, record.new_leaf_id, summarized, record.internal)]


def _retry(record: records.AutoRetryStarted) -> list[AgentEvent]:
    return [
        RetryScheduled(record.attempt, record.max_attempts, record.delay_ms, record.error_message)
    ]


def _transport_retry(record: records.TransportRetryScheduled) -> list[AgentEvent]:
    return [
        TransportRetryScheduled(
            record.attempt, record.max_attempts, record.delay_ms, record.error_message
        )
    ]


Projection = Callable[[Any], list[AgentEvent]]

#: Every record type programs see, and the events it stands for.
PROJECTION: Final[Mapping[type, Projection]] = {
    records.SessionStarted: lambda r: [SessionChanged(r.reason)],
    records.QueueUpdated: lambda r: [QueueChanged(r.steering, r.follow_up)],
    records.AgentStarted: lambda r: [RunStarted()],
    records.AgentSettled: lambda r: [RunSettled()],
    records.ProviderRequested: _request,
    records.MessageStarted: lambda r: [AssistantStarted()] if r.role == "assistant" else [],
    records.MessageUpdated: _delta,
    records.MessageEnded: _message_events,
    records.ToolExecutionStarted: lambda r: [ToolStarted(r.tool_call_id, r.tool_name, r.arguments)],
    records.ToolExecutionUpdated: _tool_updated,
    records.ToolExecutionEnded: _tool_finished,
    records.CompactionStarted: lambda r: [CompactionStarted(r.trigger)],
    records.CompactionEnded: lambda r: [CompactionFinished(r.entry, r.aborted, r.error, r.trigger)],
    records.AutoRetryStarted: _retry,
    records.AutoRetryEnded: lambda r: [RetryEnded(r.success, r.final_error, r.attempt)],
    records.TransportRetryScheduled: _transport_retry,
    records.TreeNavigated: _navigated,
}

#: Record types no program needs: hook points that change nothing a user sees (their effect
#: arrives as another record), and changes the program made itself (a thinking level it
#: set, or that came with a model it chose), kept for traces and the host's tests.
UNPROJECTED: Final[frozenset[type]] = frozenset(
    {
        records.SessionShutdown,
        records.SessionInfoChanged,
        records.InputReceived,
        records.CommandInvoked,
        records.TurnStarted,
        records.ContextProjected,
        records.ToolCallChecked,
        records.ToolResultChecked,
        records.TurnEnded,
        records.AgentEnded,
        records.CompactionPrepared,
        records.CompactionAppended,
        records.SummarizationRetryScheduled,
        records.SummarizationRetryAttemptStarted,
        records.SummarizationRetryFinished,
        records.TreeNavigationStarted,
        records.EntryAppended,
        records.ThinkingLevelChanged,
    }
)

#: Events the agent's user interface emits itself (what plugins tell the user).
FROM_THE_INTERFACE: Final[tuple[type, ...]] = (Notice, StatusChanged)


__all__ = [
    "AgentEvent",
    "AssistantStarted",
    "CompactionFinished",
    "CompactionStarted",
    "EventListener",
    "MessageFinished",
    "ModelError",
    "Navigated",
    "Notice",
    "QueueChanged",
    "RequestSent",
    "RetryEnded",
    "RetryScheduled",
    "RunSettled",
    "RunStarted",
    "SessionChanged",
    "StatusChanged",
    "SummaryStarted",
    "TextDeltaEvent",
    "ToolFinished",
    "ToolStarted",
    "TransportRetryScheduled",
    "UsageReported",
    "WindowOpened",
    "image_types",
    "message_text",
    "translate",
    "window_number",
]
