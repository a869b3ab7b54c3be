"""The parts a managed mode is assembled from, and the ones the kit provides.

:class:`~ctxmodes.windows.managed.ManagedMode` owns every hook; what makes modes differ is
one :class:`WindowStrategies` bundle, built for each session start:

* ``state`` — where the active branch's window state lives (:class:`WindowStateHolder`);
* ``projection`` — what the model sees (:class:`WindowProjection`);
* ``rollover`` — what ``new_context`` does, and what happens around it (:class:`Rollover`);
* ``compaction`` — the compaction policy (:class:`CompactionPolicy`);
* ``retrieval`` — where ``history`` and ``notes`` are answered (:class:`Retrieval`);
* ``shaping`` — the provider request's tools and replay (:class:`RequestShaping`).

The kit's own parts are Local's: :class:`LatestWindowProjection`, :class:`SameBranchRollover`
(the next marker on the same branch, with the one-time trim), :class:`TrimOnceCompaction`,
:class:`LocalRetrieval` (history from the branch, notes in the file) and
:class:`PlaintextShaping`. :meth:`WindowStrategies.defaults` builds them with any replaced;
Remote and third-party modes use them without importing another mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ctxmodes.abort import AbortSignal
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import (
    CompactionDecision,
    CompactionEvent,
    CompactionRequest,
    ContextProjection,
    InputEvent,
    NewContextOutcome,
    NewContextRequest,
    ProviderRequestEvent,
    RetrievalRequest,
    RetrievalResult,
    TreeNavigationEvent,
)
from ctxmodes.providers.base import NamespaceToolSchema, RequestMessage, ToolSchema
from ctxmodes.session.models import AssistantMessage
from ctxmodes.windows.compaction import is_no_summary_compaction
from ctxmodes.windows.notes import PreparedNoteWrite
from ctxmodes.windows.projection import latest_boundary_window_id, project_latest_window
from ctxmodes.windows.retrieval import answer_history, answer_notes
from ctxmodes.windows.routing import unroute_message
from ctxmodes.windows.state import TrackedWindowState
from ctxmodes.windows.tools import FAMILIES, namespace_tool, new_context_outcome

if TYPE_CHECKING:
    from ctxmodes.session.models import AgentMessage
    from ctxmodes.windows.history_reader import HistoryReader
    from ctxmodes.windows.managed import ManagedMode
    from ctxmodes.windows.marker import WindowMarker
    from ctxmodes.windows.state import WindowState


class WindowStateHolder(Protocol):
    """Owns a mode's window state for one session file and follows its appends."""

    @property
    def state(self) -> WindowState: ...

    def close(self) -> None: ...


class WindowProjection(Protocol):
    """What the model is sent."""

    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        """The messages the model sees (markers still as custom messages); must cost
        O(window)."""


class Rollover(Protocol):
    """What ``new_context`` does, and what a rollover needs around it."""

    @property
    def in_progress(self) -> bool:
        """While True, no window or budget marker is appended (a two-phase rollover)."""

    def request(self, request: NewContextRequest) -> NewContextOutcome:
        """Start (or schedule) the next window for the model's ``new_context`` call."""

    def projected(self, messages: Sequence[AgentMessage]) -> None:
        """The messages a request is about to carry (after the projection)."""

    def hold_input(self, event: InputEvent) -> bool:
        """True when the input is held for later (it is then consumed)."""

    def settle(self) -> None:
        """The run settled: finish a rollover that needs an idle session."""

    def navigated(self, event: TreeNavigationEvent) -> bool:
        """True when the navigation was the rollover's own (nothing else is done for it)."""

    def fresh_window(self) -> WindowMarker | None:
        """The marker of a window for a branch that has none (``None``: it has one)."""


class CompactionPolicy(Protocol):
    """What compaction means in this mode."""

    def before_compact(self, request: CompactionRequest) -> CompactionDecision | None:
        """Cancel, supply the compaction, or ``None`` to let the host summarize."""

    def compacted(self, event: CompactionEvent) -> None:
        """A compaction entry was appended."""


class HistoryProvider(Protocol):
    """Where the ``history`` tool reads (for :class:`LocalRetrieval`)."""

    def reader(self) -> HistoryReader: ...


class Retrieval(Protocol):
    """Where ``history`` and ``notes`` are answered."""

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        """One operation; expected failures are error results, not exceptions."""


class RequestShaping(Protocol):
    """What the provider request looks like for this mode and this model."""

    def shape(self, event: ProviderRequestEvent, messages: list[RequestMessage]) -> None:
        """Set ``event.request`` from ``messages`` (the markers already promoted to
        developer messages): tools, replayed calls, headers."""


class NewWindowMarker(Protocol):
    """Builds the marker of the window a rollover opens now."""

    def __call__(
        self, trim_previous_window: bool, signal: AbortSignal | None = None
    ) -> WindowMarker:
        """``trim_previous_window`` as for :func:`~ctxmodes.windows.marker.window_marker`;
        ``signal`` is the run's abort signal where a tool call opens the window (a builder
        that waits on a service must stop waiting when it aborts)."""


@dataclass(frozen=True, slots=True)
class WindowStrategies:
    """The parts of one managed mode for one session (see the module docstring)."""

    state: WindowStateHolder
    projection: WindowProjection
    rollover: Rollover
    compaction: CompactionPolicy
    retrieval: Retrieval
    shaping: RequestShaping

    @classmethod
    def defaults(
        cls,
        mode: ManagedMode,
        *,
        state: WindowStateHolder | None = None,
        projection: WindowProjection | None = None,
        rollover: Rollover | None = None,
        compaction: CompactionPolicy | None = None,
        retrieval: Retrieval | None = None,
        shaping: RequestShaping | None = None,
    ) -> WindowStrategies:
        """The kit's parts (Local's) for ``mode``'s session, with any of them replaced; the
        default state follows the session file
        (:class:`~ctxmodes.windows.state.TrackedWindowState`)."""
        return cls(
            state=state or TrackedWindowState(mode.session.session_manager),
            projection=projection or LatestWindowProjection(),
            rollover=rollover or SameBranchRollover(mode),
            compaction=compaction or TrimOnceCompaction(mode),
            retrieval=retrieval or LocalRetrieval(mode),
            shaping=shaping or PlaintextShaping(),
        )


#: Builds a mode's parts when a session starts; gets the mode object they serve.
Assemble = Callable[["ManagedMode"], WindowStrategies]


# -- the kit's parts ------------------------------------------------------------------------


class LatestWindowProjection:
    """The model sees the messages from the latest window marker on; the session file keeps
    everything."""

    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        return project_latest_window(projection.messages)


class SameBranchRollover:
    """``new_context`` appends the next marker at once, on the same branch, as steering that
    starts the next turn, marked ``trimPreviousWindow`` so that the next threshold compaction
    may cut at that boundary once. A second call before any request has carried the new
    marker is answered "already scheduled".

    :param new_window: builds the marker a rollover opens (Remote adds its backend's thread
        hint); by default the window state's next marker, with the hint from this branch.
    """

    def __init__(self, mode: ManagedMode, new_window: NewWindowMarker | None = None) -> None:
        self._mode = mode
        self._new_window = new_window
        #: The window a ``new_context`` call opened whose marker no request has carried yet.
        self._pending_window_id: str | None = None

    @property
    def in_progress(self) -> bool:
        return False

    def request(self, request: NewContextRequest) -> NewContextOutcome:
        if self._pending_window_id is not None:
            return new_context_outcome(started=False)
        marker = next_marker(
            self._mode, self._new_window, trim_previous_window=True, signal=request.signal
        )
        self._pending_window_id = marker.details.context_management.current_window_id
        # Steering queued during this turn would reach the model before the marker, in the
        # window being closed, and go unanswered: it follows the marker instead.
        session = self._mode.session
        steering = session.take_queued("steer")
        self._mode.send_marker(marker, trigger_turn=True)
        for message in steering:
            session.enqueue(message, deliver_as="steer")
        return new_context_outcome(started=True)

    def projected(self, messages: Sequence[AgentMessage]) -> None:
        if self._pending_window_id is not None and (
            latest_boundary_window_id(messages) == self._pending_window_id
        ):
            self._pending_window_id = None

    def hold_input(self, event: InputEvent) -> bool:
        return False

    def settle(self) -> None:
        return None

    def navigated(self, event: TreeNavigationEvent) -> bool:
        # The user moved to another branch: its window state is rebuilt on the next access.
        self._pending_window_id = None
        return False

    def fresh_window(self) -> WindowMarker | None:
        windows = self._mode.windows
        if self._new_window is None:
            return windows.initial_window_marker()
        return self._new_window(False) if windows.current is None else None


def next_marker(
    mode: ManagedMode,
    new_window: NewWindowMarker | None,
    *,
    trim_previous_window: bool,
    signal: AbortSignal | None = None,
) -> WindowMarker:
    """The marker of the window opened now: ``new_window``'s, or the window state's."""
    if new_window is not None:
        return new_window(trim_previous_window, signal)
    return mode.windows.next_window_marker(trim_previous_window=trim_previous_window)


class TrimOnceCompaction:
    """Threshold compaction is cancelled, except once after each same-branch rollover, when
    the fixed no-summary compaction cut at the new boundary aligns Pi's token accounting with
    what the model sees. Manual ``/compact`` and overflow write the fixed compaction at the
    latest boundary, then open a fresh window (an overflow's window starts a turn, since the
    interrupted request goes on)."""

    def __init__(self, mode: ManagedMode, new_window: NewWindowMarker | None = None) -> None:
        self._mode = mode
        self._new_window = new_window

    def before_compact(self, request: CompactionRequest) -> CompactionDecision | None:
        if request.trigger == "threshold":
            windows = self._mode.windows
            current = windows.current
            trim_due = (
                current is not None and windows.pending_trim_window_id == current.current_window_id
            )
            if not trim_due:
                # Windows end through new_context and the budget markers, not Pi's summary.
                return CompactionDecision(cancel=True)
        return self._mode.no_summary_compaction(request)

    def compacted(self, event: CompactionEvent) -> None:
        if event.trigger == "threshold" or not is_no_summary_compaction(event.entry):
            return  # the one-time trim keeps the current window
        marker = next_marker(self._mode, self._new_window, trim_previous_window=False)
        # After an overflow the interrupted request must go on, in the fresh window.
        self._mode.send_marker(marker, trigger_turn=event.trigger == "overflow")


class SessionHistory:
    """``history`` reads the windows of the session's active branch."""

    def __init__(self, mode: ManagedMode) -> None:
        self._mode = mode

    def reader(self) -> HistoryReader:
        return self._mode.windows.reader()


class LocalRetrieval:
    """``history`` from ``history`` (by default the active branch's windows) and ``notes``
    as entries of the session file, both answered on this machine."""

    def __init__(self, mode: ManagedMode, history: HistoryProvider | None = None) -> None:
        self._mode = mode
        self._history = history or SessionHistory(mode)

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        if request.family == "history":
            return answer_history(self._history.reader(), request.action, request.arguments)
        notes = self._mode.windows.notes
        return answer_notes(notes, request.action, request.arguments, self._persist)

    def _persist(self, prepared: PreparedNoteWrite) -> str:
        try:
            return self._mode.session.append_entry(prepared.custom_type, prepared.data.dump())
        except OSError as error:
            raise CtxmodesError(f"the note could not be saved: {error}") from error


class PlaintextShaping:
    """Where the model accepts namespaced tools, ``history`` and ``notes`` are offered as
    plaintext namespaces and routed calls are replayed in that shape; elsewhere the flat
    routers stay."""

    def shape(self, event: ProviderRequestEvent, messages: list[RequestMessage]) -> None:
        request = event.request
        if event.capabilities.namespaced_tools:
            messages = [
                unroute_message(m) if isinstance(m, AssistantMessage) else m for m in messages
            ]
            request.tools = namespaced_tools(request.tools)
        request.messages = messages


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
