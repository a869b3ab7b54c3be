"""The hook implementations every context-window mode shares.

:class:`WindowedMode` is the per-session object of a managed mode minus the parts that make
modes differ. It opens window 0 on the first input, records the budget from each assistant
message and appends the reminder or fallback marker when due, serves the four context tools,
answers ``history`` and ``notes``, routes namespaced calls to the flat routers, and carries
the window marker through Pi's message conversion to a developer message at the provider
boundary. A subclass decides what the model sees (:meth:`WindowedMode.project`), what
``new_context`` does (:meth:`WindowedMode.start_new_context`), where its window state lives
(:meth:`WindowedMode.open_state`), and its compaction and navigation policy (its own hooks).

pluggy finds hook implementations on the instance, inherited ones included; a subclass that
overrides one must mark the override with ``@hookimpl`` again.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ctxmodes.compaction.tokens import calculate_context_tokens
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import (
    CompactionDecision,
    CompactionRequest,
    ContextProjection,
    InputEvent,
    InputResult,
    NewContextOutcome,
    NewContextRequest,
    ProviderRequestEvent,
    RetrievalRequest,
    RetrievalResult,
    SessionShutdownReason,
    SessionStartReason,
)
from ctxmodes.hookspecs import hookimpl
from ctxmodes.providers.base import NamespaceToolSchema, ToolSchema
from ctxmodes.session.models import AgentMessage, AssistantMessage
from ctxmodes.windows.agent_tools import context_tools
from ctxmodes.windows.budget import ContextRemaining, context_remaining, remaining_tokens
from ctxmodes.windows.compaction import no_summary_compaction
from ctxmodes.windows.marker import WindowMarker
from ctxmodes.windows.notes import PreparedNoteWrite
from ctxmodes.windows.projection import DeveloperMessageBridge
from ctxmodes.windows.retrieval import answer_history, answer_notes
from ctxmodes.windows.routing import route_message, unroute_message
from ctxmodes.windows.tools import FAMILIES, namespace_tool

if TYPE_CHECKING:
    from ctxmodes.hostapi import HostSession
    from ctxmodes.tools.base import Tool
    from ctxmodes.windows.history_reader import HistoryReader
    from ctxmodes.windows.state import WindowState

#: Assistant stop reasons whose usage does not describe a complete request.
UNMEASURED_STOPS = frozenset({"error", "aborted", "length"})


class WindowStateHolder(Protocol):
    """Owns a mode's window state for one session file and follows its appends."""

    @property
    def state(self) -> WindowState: ...

    def close(self) -> None: ...


class WindowedMode(ABC):
    """Shared hooks of the managed modes (see the module docstring)."""

    def __init__(self, session: HostSession) -> None:
        self._session = session
        self._holder: WindowStateHolder | None = None
        self._bridge = DeveloperMessageBridge()
        self._context_tokens: int | None = None

    # -- what subclasses decide ----------------------------------------------------------

    @abstractmethod
    def open_state(self, session: HostSession) -> WindowStateHolder:
        """Build the window state of ``session``'s file (called at session start)."""

    @abstractmethod
    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        """The messages the model sees, markers still as custom messages."""

    @abstractmethod
    def start_new_context(self, request: NewContextRequest) -> NewContextOutcome:
        """What ``new_context`` does in this mode."""

    def history_reader(self) -> HistoryReader:
        """The history the ``history`` tool reads; Tree adds its archived windows."""
        return self.windows.reader()

    @property
    def rollover_in_progress(self) -> bool:
        """While True, no window or budget marker is appended (Tree's two-phase rollover)."""
        return False

    # -- state ----------------------------------------------------------------------------

    @property
    def session(self) -> HostSession:
        return self._session

    @property
    def windows(self) -> WindowState:
        """The window state of the active branch."""
        if self._holder is None:
            self._holder = self.open_state(self._session)
        return self._holder.state

    def send_marker(self, marker: WindowMarker, *, trigger_turn: bool) -> None:
        """Append ``marker`` through the host (so it is persisted and ordered like Pi's)."""
        self._session.send_custom_message(
            marker.custom_type,
            marker.content,
            display=marker.display,
            details=marker.details.dump(),
            trigger_turn=trigger_turn,
            deliver_as="steer" if trigger_turn else None,
        )

    def ensure_window(self) -> None:
        """Open window 0 on a branch that has none yet (enabling a mode mid-session starts a
        fresh window on the next input)."""
        if self.rollover_in_progress:
            return
        marker = self.windows.initial_window_marker()
        if marker is not None:
            self.send_marker(marker, trigger_turn=False)

    def context_remaining(self) -> ContextRemaining:
        current = self.windows.current
        return context_remaining(
            self._session.context_window,
            self._context_tokens,
            current.current_window_id if current is not None else None,
        )

    def no_summary_compaction(self, request: CompactionRequest) -> CompactionDecision | None:
        """The fixed no-summary compaction cut at the latest window boundary (``None`` when
        Pi found nothing to compact)."""
        preparation = request.preparation
        if preparation is None:
            return None
        windows = self.windows
        current = windows.current
        fixed = no_summary_compaction(
            boundary_entry_id=windows.identity.boundary_entry_id,
            default_first_kept_entry_id=preparation.first_kept_entry_id,
            tokens_before=preparation.tokens_before,
            window_id=current.current_window_id if current is not None else None,
        )
        return CompactionDecision(
            summary=fixed.summary,
            first_kept_entry_id=fixed.first_kept_entry_id,
            tokens_before=fixed.tokens_before,
            details=fixed.details.dump(),
        )

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        if request.family == "history":
            return answer_history(self.history_reader(), request.action, request.arguments)
        return answer_notes(self.windows.notes, request.action, request.arguments, self._persist)

    def _persist(self, prepared: PreparedNoteWrite) -> str:
        try:
            return self._session.session_manager.append_custom_entry(
                prepared.custom_type, prepared.data.dump()
            )
        except OSError as error:
            raise CtxmodesError(f"the note could not be saved: {error}") from error

    # -- hooks ----------------------------------------------------------------------------

    @hookimpl
    def ctx_session_start(self, session: HostSession, reason: SessionStartReason) -> None:
        # Rebuilt from the file on every start: nothing in memory outlives a session. Window 0
        # is opened by the first input, not here, so inspecting a session never writes to it.
        self._close_state()
        self._session = session
        self._context_tokens = None
        self._holder = self.open_state(session)

    @hookimpl
    def ctx_session_shutdown(self, session: HostSession, reason: SessionShutdownReason) -> None:
        self._close_state()

    def _close_state(self) -> None:
        if self._holder is not None:
            self._holder.close()
            self._holder = None

    @hookimpl
    def ctx_register_tools(self, register: Callable[[Tool], None], session: HostSession) -> None:
        for tool in context_tools(self):
            register(tool)

    @hookimpl
    def ctx_input(self, session: HostSession, event: InputEvent) -> InputResult | None:
        if event.streaming_behavior is None:
            self.ensure_window()
        return None

    @hookimpl
    def ctx_project_context(self, session: HostSession, projection: ContextProjection) -> None:
        projection.messages = self._bridge.conceal(self.project(projection))

    @hookimpl
    def ctx_provider_request(self, session: HostSession, event: ProviderRequestEvent) -> None:
        request = event.request
        namespaced = event.capabilities.namespaced_tools
        messages = self._bridge.promote(request.messages)
        if namespaced:
            messages = [
                unroute_message(m) if isinstance(m, AssistantMessage) else m for m in messages
            ]
            request.tools = namespaced_tools(request.tools)
        request.messages = messages

    @hookimpl
    def ctx_message_end(self, session: HostSession, message: AgentMessage) -> AgentMessage | None:
        if not isinstance(message, AssistantMessage):
            return None
        routed = route_message(message)
        if message.stop_reason not in UNMEASURED_STOPS:
            self._record_budget(routed)
        return routed if routed is not message else None

    def _record_budget(self, message: AssistantMessage) -> None:
        self._context_tokens = int(calculate_context_tokens(message.usage))
        if self.rollover_in_progress:
            return
        windows = self.windows
        remaining = remaining_tokens(self._session.context_window, self._context_tokens)
        marker = windows.budget.check(windows.current, remaining)
        if marker is not None:
            # The fallback must make the model act now; a reminder waits for the next turn.
            self.send_marker(marker, trigger_turn=marker.kind == "fallback")

    @hookimpl
    def ctx_new_context(
        self, session: HostSession, request: NewContextRequest
    ) -> NewContextOutcome | None:
        return self.start_new_context(request)

    @hookimpl
    def ctx_retrieve(self, session: HostSession, request: RetrievalRequest) -> RetrievalResult:
        return self.retrieve(request)


def namespaced_tools(
    tools: list[ToolSchema | NamespaceToolSchema], *, encrypted: bool = False
) -> list[ToolSchema | NamespaceToolSchema]:
    """Replace the flat ``history``/``notes`` routers by their namespaces: plaintext, or
    with ``encrypted`` the native Codex shape Remote offers."""
    shaped: list[ToolSchema | NamespaceToolSchema] = []
    for tool in tools:
        if isinstance(tool, ToolSchema) and tool.name in FAMILIES:
            spec = namespace_tool(tool.name, encrypted=encrypted)
            shaped.append(
                NamespaceToolSchema(
                    name=spec["name"],
                    description=spec["description"],
                    tools=[
                        ToolSchema(
                            name=fn["name"],
                            description=fn["description"],
                            parameters=fn["parameters"],
                        )
                        for fn in spec["tools"]
                    ],
                )
            )
        else:
            shaped.append(tool)
    return shaped
