"""Payloads passed to lifecycle hooks.

Plain dataclasses: they are built on the per-turn path, so they stay cheap. Mutable payloads
(``ContextProjection``, ``ProviderRequestEvent``, ``ToolResultEvent``) are the chaining
mechanism: each implementation sees what earlier ones did and may change it in place.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ctxmodes.abort import AbortSignal
    from ctxmodes.providers.base import ModelCapabilities, ModelRequest
    from ctxmodes.session.models import (
        AgentMessage,
        AssistantMessage,
        BranchSummaryEntry,
        CompactionEntry,
        ImageContent,
        SessionEntry,
        ToolResultMessage,
    )
    from ctxmodes.tools.user_command import ShellRunner, UserCommandResult

SessionStartReason = Literal["startup", "resume", "new", "fork", "reload"]
SessionShutdownReason = Literal["quit", "new", "resume", "fork", "reload"]
InputSource = Literal["interactive", "extension", "replay"]
CompactionTrigger = Literal["manual", "threshold", "overflow"]


@dataclass(frozen=True, slots=True)
class InputEvent:
    """Text submitted to the session, before command dispatch by plugins and the model call."""

    text: str
    source: InputSource = "interactive"
    #: ``"steer"`` or ``"follow_up"`` while a run is active; ``None`` while idle.
    streaming_behavior: Literal["steer", "follow_up"] | None = None
    #: Images attached to the text (a command line's ``@FILE`` images, say); they follow
    #: the text in the user message.
    images: tuple[ImageContent, ...] = ()


@dataclass(frozen=True, slots=True)
class InputResult:
    """What an ``ctx_input`` implementation decided.

    ``action="handled"`` consumes the input (no message, no run); ``action="transform"``
    replaces its text with ``text`` and, when ``images`` is not ``None``, its images with
    ``images`` (``()`` removes them); otherwise the input keeps its images.
    """

    action: Literal["handled", "transform"]
    text: str | None = None
    images: tuple[ImageContent, ...] | None = None


@dataclass(slots=True)
class ContextProjection:
    """The messages the model will see on this request; implementations replace ``messages``.

    Never persisted: a projection affects one model request only. The host passes a
    :class:`~ctxmodes.host.message_list.MessageList`, which reads the session's context on
    demand; an implementation may assign any mutable sequence (a list) in its place.
    """

    messages: MutableSequence[AgentMessage]
    #: The active branch, root first, the entries ``messages`` were built from. Read-only;
    #: the host lists it only when a plugin reads it, so ignoring it costs nothing.
    branch: Sequence[SessionEntry]


@dataclass(slots=True)
class ProviderRequestEvent:
    """The provider request about to be sent; implementations edit ``request`` in place or
    assign a replacement. ``transport`` names the wire shape (``"scripted"``,
    ``"openai-responses"`` ...) for tracing; modes shape tools by ``capabilities``."""

    request: ModelRequest
    transport: str
    capabilities: ModelCapabilities


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallBlock:
    """Returned by ``ctx_tool_call`` to refuse a call; the model gets an error result."""

    reason: str


@dataclass(slots=True)
class ToolResultEvent:
    """A finished tool call; implementations may patch ``result`` before it is persisted."""

    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]
    result: ToolResultMessage


@dataclass(frozen=True, slots=True)
class TurnEndEvent:
    turn_index: int
    message: AssistantMessage
    tool_results: tuple[ToolResultMessage, ...]


@dataclass(frozen=True, slots=True)
class NewContextRequest:
    """The model called ``new_context``; ``tool_call_id`` identifies that call.

    ``signal`` is the tool call's abort signal: a mode that asks a remote service for the
    next window's marker ends that call when the run is aborted.
    """

    tool_call_id: str
    signal: AbortSignal | None = None


@dataclass(frozen=True, slots=True)
class NewContextOutcome:
    """What the active mode did with a ``new_context`` request.

    ``started`` is False when a rollover was already pending. ``message`` is the tool result
    text the model sees. ``terminate`` asks the host to end the run after this tool batch.
    """

    started: bool
    message: str
    terminate: bool = False
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SessionSwitchRequest:
    """The current session is about to be replaced (``ctx_session_before_switch``): by a
    new one (``reason="new"``: ``/new``, RPC ``new_session``) or by the session stored at
    ``target_session_file`` (``"resume"``: ``/resume``, RPC ``switch_session``)."""

    reason: Literal["new", "resume"]
    target_session_file: str | None = None


@dataclass(frozen=True, slots=True)
class ForkRequest:
    """The current session is about to be forked (``ctx_session_before_fork``): at the
    entry ``entry_id`` (``position="at"``: the fork keeps it; RPC ``clone`` forks the
    leaf so; ``None`` at the leaf of a session without entries) or before it
    (``"before"``: a user message, whose text goes back to the editor). Told before the
    entry is looked up, as Pi tells its extensions: ``entry_id`` may name no entry, or be
    ``None`` for an RPC ``fork`` without a string ``entryId``; that fork then fails."""

    entry_id: str | None
    position: Literal["before", "at"] = "before"


@dataclass(frozen=True, slots=True)
class SessionChangeDecision:
    """Returned by ``ctx_session_before_switch`` and ``ctx_session_before_fork``:
    ``cancel`` keeps the current session."""

    cancel: bool = False


@dataclass(frozen=True, slots=True)
class UserBashEvent:
    """A shell command the user is about to run (``ctx_user_bash``): ``!command`` or
    ``!!command`` in the terminal, RPC's ``bash``, as typed (without the configured
    prefix)."""

    command: str
    #: ``True`` for ``!!``: the command's output is kept from the model.
    exclude_from_context: bool
    #: The session's working directory, where the command runs.
    cwd: Path


@dataclass(frozen=True, slots=True)
class UserBashResult:
    """What a ``ctx_user_bash`` implementation decided (Pi's ``{operations}`` or
    ``{result}``).

    ``result`` replaces the command altogether: nothing runs, and the result is recorded
    as its ``bashExecution`` message (and answered to RPC's ``bash``) just as given.
    Otherwise ``operations`` runs the command instead of ctxmodes' own runner
    (:func:`~ctxmodes.local_shell_runner`, which it may wrap); its output is cleaned, cut
    and kept in a file as that of a local command. Neither: the command runs locally, and
    no other plugin is asked.
    """

    operations: ShellRunner | None = None
    result: UserCommandResult | None = None

    def __post_init__(self) -> None:
        from ctxmodes.tools.user_command import UserCommandResult

        if self.operations is not None and not callable(self.operations):
            raise TypeError(
                f"operations must be a ShellRunner, not {type(self.operations).__name__}"
            )
        if self.result is not None and not isinstance(self.result, UserCommandResult):
            raise TypeError(f"result must be a UserCommandResult, not {type(self.result).__name__}")


@dataclass(frozen=True, slots=True)
class TreePreparation:
    """A tree navigation about to happen (``ctx_session_before_tree``)."""

    target_id: str | None
    old_leaf_id: str | None
    #: The common ancestor of the old leaf and the target (``None`` for separate roots).
    common_ancestor_id: str | None
    #: The entries that would be summarized, oldest first (empty without ``summarize``),
    #: decoded as they are read: the abandoned branch may be the whole of a long session.
    entries_to_summarize: Sequence[SessionEntry]
    summarize: bool
    custom_instructions: str | None
    label: str | None
    internal: bool
    #: ``custom_instructions`` replace the summary instructions instead of adding a focus.
    replace_instructions: bool = False


@dataclass(frozen=True, slots=True)
class TreeDecision:
    """Returned by ``ctx_session_before_tree``: cancel, or supply a summary or options."""

    cancel: bool = False
    summary: str | None = None
    summary_details: Any = None
    custom_instructions: str | None = None
    #: Set to use ``custom_instructions`` instead of the summary instructions (True) or as
    #: an added focus (False); ``None`` keeps the caller's choice.
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class TreeNavigationEvent:
    """A completed tree navigation (``ctx_session_tree``).

    ``internal`` is True when a mode moved the leaf as part of a context rollover, False for
    a navigation the user asked for; plugins keep runtime state across the former and reset
    it on the latter.
    """

    old_leaf_id: str | None
    new_leaf_id: str | None
    summary_entry: BranchSummaryEntry | None
    internal: bool


@dataclass(frozen=True, slots=True)
class CompactionRequest:
    """A compaction about to run (``ctx_session_before_compact``).

    ``preparation`` is the core's cut-point computation (``ctxmodes.compaction``), or ``None``
    when there is nothing to compact.
    """

    trigger: CompactionTrigger
    custom_instructions: str | None
    branch: tuple[SessionEntry, ...]
    preparation: Any


@dataclass(frozen=True, slots=True)
class CompactionDecision:
    """Returned by ``ctx_session_before_compact``: cancel it, or supply the entry's content."""

    cancel: bool = False
    summary: str | None = None
    first_kept_entry_id: str | None = None
    tokens_before: int | None = None
    details: Any = None


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """A compaction entry was appended (``ctx_session_compact``)."""

    entry: CompactionEntry
    trigger: CompactionTrigger
    from_plugin: bool


@dataclass(frozen=True, slots=True)
class RetrievalRequest:
    """A ``history`` or ``notes`` operation the model (or the CLI) asked for.

    ``signal`` is the tool call's abort signal (``None`` offline); a mode that answers from
    elsewhere than the session file (Remote's service) must stop when it aborts.
    """

    family: Literal["history", "notes"]
    action: str
    arguments: dict[str, Any]
    signal: AbortSignal | None = None


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """The answer to a :class:`RetrievalRequest`; ``is_error`` results carry the message.
    ``images`` follow the text in the tool result (a service's ``history.read_item``)."""

    text: str
    details: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    images: tuple[ImageContent, ...] = ()
