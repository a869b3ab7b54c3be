"""The per-session object of every managed mode: the kit owns the hooks.

:class:`ManagedMode` implements every hook a context-window mode needs. It opens window 0 on
the first input, records the budget from each assistant message and appends the reminder or
fallback marker when due, serves the four context tools, answers ``history`` and ``notes``,
routes namespaced calls to the flat routers when the model accepts namespaced tools, and
carries the window marker through Pi's message conversion to a developer message at the
provider boundary.

What makes modes differ is assembled, not inherited: a mode passes a function that builds its
:class:`~ctxmodes.windows.strategies.WindowStrategies` (state, projection, rollover,
compaction policy, history) for each session start. :class:`ManagedMode` cannot be
subclassed, so no mode can drop a hook by overriding it without marking it again; a mode
that needs a hook the kit does not implement registers a separate plugin object for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, final

from ctxmodes import hookimpl
from ctxmodes.compaction.tokens import calculate_context_tokens
from ctxmodes.events import (
    CompactionDecision,
    CompactionEvent,
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
    TreeNavigationEvent,
)
from ctxmodes.session.models import AgentMessage, AssistantMessage
from ctxmodes.windows.agent_tools import context_tools
from ctxmodes.windows.budget import (
    ContextRemaining,
    context_remaining,
    remaining_tokens,
    reminder_threshold,
    small_window_warning,
)
from ctxmodes.windows.compaction import no_summary_compaction
from ctxmodes.windows.marker import WindowMarker
from ctxmodes.windows.projection import DeveloperMessageBridge
from ctxmodes.windows.routing import route_message
from ctxmodes.windows.strategies import Assemble, WindowStrategies

if TYPE_CHECKING:
    from ctxmodes.hostapi import HostSession
    from ctxmodes.tools.base import Tool
    from ctxmodes.windows.state import WindowState

#: Assistant stop reasons whose usage does not describe a complete request.
UNMEASURED_STOPS = frozenset({"error", "aborted", "length"})


@final
class ManagedMode:
    """One managed mode for one session (see the module docstring).

    :param assemble: builds the mode's parts; called at each session start (and on first use
        before one), with this object.
    """

    def __init__(self, session: HostSession, assemble: Assemble) -> None:
        self._session = session
        self._assemble = assemble
        self._parts: WindowStrategies | None = None
        self._bridge = DeveloperMessageBridge()
        self._context_tokens: int | None = None
        #: The context window last checked for being small (warned about once each).
        self._checked_window: int | None = None
        #: Why the current session started (``None`` before ``ctx_session_start``), for
        #: parts that react to it (Tree tells a fork which archives stayed behind).
        self.start_reason: SessionStartReason | None = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        raise TypeError(
            "ManagedMode is not subclassed: pass the mode's parts as WindowStrategies "
            "(a subclass could drop a hook by overriding it)"
        )

    # -- services for the parts -----------------------------------------------------------

    @property
    def session(self) -> HostSession:
        return self._session

    @property
    def parts(self) -> WindowStrategies:
        """This session's parts, assembled on first use."""
        if self._parts is None:
            self._parts = self._assemble(self)
        return self._parts

    @property
    def windows(self) -> WindowState:
        """The window state of the active branch."""
        return self.parts.state.state

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
        """Open a window on a branch that has none yet (enabling a mode mid-session starts a
        fresh window on the next input); never during a rollover."""
        rollover = self.parts.rollover
        if rollover.in_progress:
            return
        marker = rollover.fresh_window()
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
        """Answer one ``history`` or ``notes`` operation."""
        return self.parts.retrieval.retrieve(request)

    # -- hooks ----------------------------------------------------------------------------

    @hookimpl
    def ctx_session_start(self, session: HostSession, reason: SessionStartReason) -> None:
        # Rebuilt from the file on every start: nothing in memory outlives a session. Window 0
        # is opened by the first input, not here, so inspecting a session never writes to it.
        self._close_parts()
        self._session = session
        self._context_tokens = None
        self.start_reason = reason
        self._parts = self._assemble(self)

    @hookimpl
    def ctx_session_shutdown(self, session: HostSession, reason: SessionShutdownReason) -> None:
        self._close_parts()

    def _close_parts(self) -> None:
        if self._parts is not None:
            self._parts.state.close()
            self._parts = None

    @hookimpl
    def ctx_register_tools(self, register: Callable[[Tool], None], session: HostSession) -> None:
        for tool in context_tools(self):
            register(tool)

    @hookimpl
    def ctx_input(self, session: HostSession, event: InputEvent) -> InputResult | None:
        self._warn_if_small_window()
        if self.parts.rollover.hold_input(event):
            return InputResult(action="handled")
        if event.streaming_behavior is None:
            self.ensure_window()
        return None

    def _warn_if_small_window(self) -> None:
        window = self._session.context_window
        if window == self._checked_window:
            return
        self._checked_window = window
        warning = small_window_warning(window, self._session.mode_name)
        if warning is not None:
            self._session.ui.notify(warning, "warning")

    @hookimpl
    def ctx_project_context(self, session: HostSession, projection: ContextProjection) -> None:
        parts = self.parts
        messages = parts.projection.project(projection)
        parts.rollover.projected(messages)
        projection.messages = self._bridge.conceal(messages)

    @hookimpl
    def ctx_provider_request(self, session: HostSession, event: ProviderRequestEvent) -> None:
        self.parts.shaping.shape(event, self._bridge.promote(event.request.messages))

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
        if self.parts.rollover.in_progress:
            return
        windows = self.windows
        context_window = self._session.context_window
        remaining = remaining_tokens(context_window, self._context_tokens)
        marker = windows.budget.check(
            windows.current, remaining, reminder_threshold(context_window)
        )
        if marker is not None:
            # The fallback must make the model act now; a reminder waits for the next turn.
            self.send_marker(marker, trigger_turn=marker.kind == "fallback")

    @hookimpl
    def ctx_new_context(
        self, session: HostSession, request: NewContextRequest
    ) -> NewContextOutcome | None:
        return self.parts.rollover.request(request)

    @hookimpl
    def ctx_retrieve(self, session: HostSession, request: RetrievalRequest) -> RetrievalResult:
        return self.retrieve(request)

    @hookimpl
    def ctx_agent_settled(self, session: HostSession) -> None:
        self.parts.rollover.settle()

    @hookimpl
    def ctx_session_tree(self, session: HostSession, event: TreeNavigationEvent) -> None:
        if self.parts.rollover.navigated(event):
            return
        # A navigation the user chose: the state follows the selected branch, which gets a
        # window if it has none.
        self.ensure_window()

    @hookimpl
    def ctx_session_before_compact(
        self, session: HostSession, request: CompactionRequest
    ) -> CompactionDecision | None:
        return self.parts.compaction.before_compact(request)

    @hookimpl
    def ctx_session_compact(self, session: HostSession, event: CompactionEvent) -> None:
        self.parts.compaction.compacted(event)
