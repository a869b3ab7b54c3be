"""The same-branch window lifecycle: every window on the active branch, one after another.

:class:`SameBranchMode` is a :class:`~ctxmodes.windows.mode.WindowedMode` with the policy
Local and Remote share:

* projection: the model sees the messages from the latest window marker on (the session
  file keeps everything; only the request is cut);
* ``new_context``: the next marker is appended at once, as steering that starts the next
  turn, marked ``trimPreviousWindow`` so that Pi's next threshold compaction may cut the
  file's context at that boundary once, aligning Pi's token accounting with what the model
  sees;
* compaction: threshold compaction is cancelled except for that one-time trim; manual
  ``/compact`` and overflow write the fixed no-summary compaction at the latest boundary and
  then open a fresh window (an overflow's window starts a turn, since Pi retries).

Where a mode keeps history and notes, and what a new window's thread hint says, stay the
subclass's (:meth:`SameBranchMode.new_window_marker`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.events import (
    CompactionDecision,
    CompactionEvent,
    CompactionRequest,
    ContextProjection,
    NewContextOutcome,
    NewContextRequest,
    TreeNavigationEvent,
)
from ctxmodes.hookspecs import hookimpl
from ctxmodes.windows.compaction import is_no_summary_compaction
from ctxmodes.windows.mode import WindowedMode, WindowStateHolder
from ctxmodes.windows.projection import latest_boundary_window_id, project_latest_window
from ctxmodes.windows.state import TrackedWindowState
from ctxmodes.windows.tools import new_context_outcome

if TYPE_CHECKING:
    from ctxmodes.hostapi import HostSession
    from ctxmodes.session.models import AgentMessage
    from ctxmodes.windows.marker import WindowMarker


class SameBranchMode(WindowedMode):
    """Windows one after another on the active branch (see the module docstring)."""

    def __init__(self, session: HostSession) -> None:
        super().__init__(session)
        #: The window a ``new_context`` call opened whose marker no request has seen yet.
        self._pending_window_id: str | None = None

    def new_window_marker(self, *, trim_previous_window: bool) -> WindowMarker:
        """The marker of the window a rollover opens now; by default with the thread hint
        built from this branch's notes and latest window."""
        return self.windows.next_window_marker(trim_previous_window=trim_previous_window)

    def open_state(self, session: HostSession) -> WindowStateHolder:
        self._pending_window_id = None
        return TrackedWindowState(session.session_manager)

    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        messages = project_latest_window(projection.messages)
        if self._pending_window_id is not None and (
            latest_boundary_window_id(messages) == self._pending_window_id
        ):
            self._pending_window_id = None
        return messages

    def start_new_context(self, request: NewContextRequest) -> NewContextOutcome:
        if self._pending_window_id is not None:
            return new_context_outcome(started=False)
        marker = self.new_window_marker(trim_previous_window=True)
        self._pending_window_id = marker.details.context_management.current_window_id
        self.send_marker(marker, trigger_turn=True)
        return new_context_outcome(started=True)

    @hookimpl
    def ctx_session_tree(self, session: HostSession, event: TreeNavigationEvent) -> None:
        # The user moved to another branch: its window state is rebuilt on the next access,
        # and it gets a window if it has none.
        self._pending_window_id = None
        self.ensure_window()

    @hookimpl
    def ctx_session_before_compact(
        self, session: HostSession, request: CompactionRequest
    ) -> CompactionDecision | None:
        if request.trigger == "threshold":
            windows = self.windows
            current = windows.current
            trim_due = (
                current is not None and windows.pending_trim_window_id == current.current_window_id
            )
            if not trim_due:
                # Windows end through new_context and the budget markers, not Pi's summary.
                return CompactionDecision(cancel=True)
        return self.no_summary_compaction(request)

    @hookimpl
    def ctx_session_compact(self, session: HostSession, event: CompactionEvent) -> None:
        if event.trigger == "threshold" or not is_no_summary_compaction(event.entry):
            return  # the one-time trim keeps the current window
        marker = self.new_window_marker(trim_previous_window=False)
        # After an overflow the interrupted request must go on, in the fresh window.
        self.send_marker(marker, trigger_turn=event.trigger == "overflow")
