"""The per-session object of the Tree mode.

Tree shares every model-facing behaviour with the other managed modes
(:class:`~ctxmodes.windows.mode.WindowedMode`: window 0 on the first input, budget markers,
the four context tools, developer-role markers, namespace routing). It differs in:

* state: the window state is joined by the archive index of the active branch
  (:class:`~ctxmodes_tree.state.TreeState`);
* projection: owned branch summaries are filtered out; the tree has already cut the old
  windows (:mod:`ctxmodes_tree.projection`);
* ``new_context``: a two-phase rollover finished in ``ctx_agent_settled``
  (:mod:`ctxmodes_tree.coordinator`); input submitted meanwhile is held;
* history: archived windows first, each with its hidden summary;
* compaction: threshold compaction is cancelled; manual ``/compact`` lets Pi write its
  readable cumulative summary and then opens a fresh window (the safe point to leave Tree);
  an overflow writes the fixed no-summary compaction and rolls over;
* navigation: the user's own ``/tree`` moves are followed (fresh window when needed); the
  rollover's internal navigation is recognised and left alone.
"""

from __future__ import annotations

from ctxmodes.events import (
    CompactionDecision,
    CompactionEvent,
    CompactionRequest,
    ContextProjection,
    InputEvent,
    InputResult,
    NewContextOutcome,
    NewContextRequest,
    TreeNavigationEvent,
)
from ctxmodes.hookspecs import hookimpl
from ctxmodes.hostapi import HostSession
from ctxmodes.session.models import AgentMessage
from ctxmodes.windows.compaction import is_no_summary_compaction
from ctxmodes.windows.history_reader import HistoryReader
from ctxmodes.windows.mode import WindowedMode
from ctxmodes_tree.coordinator import FAILURE_PREFIX, RolloverCoordinator, RolloverError
from ctxmodes_tree.projection import project_tree_context
from ctxmodes_tree.state import TreeState
from ctxmodes_tree.traversal import ArchiveRejection

ARCHIVE_REJECTED = "Tree archive {id} is unavailable: {reason}"


class TreeMode(WindowedMode):
    """Tree mode for one session (built by the mode registry when the session starts)."""

    def __init__(self, session: HostSession) -> None:
        super().__init__(session)
        self._tree: TreeState | None = None
        self._coordinator: RolloverCoordinator | None = None

    # -- what Tree decides -----------------------------------------------------------------

    def open_state(self, session: HostSession) -> TreeState:
        def report(manifest_id: str, reason: ArchiveRejection) -> None:
            # Once per manifest and session: the model then sees the summary that manifest
            # claims, and history cannot read its window; the user should know why.
            session.ui.notify(ARCHIVE_REJECTED.format(id=manifest_id, reason=reason), "warning")

        self._tree = TreeState(session.session_manager, on_rejected=report)
        self._coordinator = RolloverCoordinator(session, self._tree)
        return self._tree

    @property
    def tree(self) -> TreeState:
        if self._tree is None:
            self.windows  # noqa: B018 - opens the state
        assert self._tree is not None
        return self._tree

    @property
    def coordinator(self) -> RolloverCoordinator:
        if self._coordinator is None:
            self.windows  # noqa: B018 - opens the state
        assert self._coordinator is not None
        return self._coordinator

    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        return project_tree_context(projection, self.tree.archives)

    def start_new_context(self, request: NewContextRequest) -> NewContextOutcome:
        try:
            return self.coordinator.schedule()
        except RolloverError as error:
            return NewContextOutcome(started=False, message=str(error), details={"started": False})

    def history_reader(self) -> HistoryReader:
        return self.tree.reader()

    @property
    def rollover_in_progress(self) -> bool:
        return self._coordinator is not None and self._coordinator.busy

    def ensure_window(self) -> None:
        """Open a window on a branch that has none. When the branch's windows were all
        archived (the user navigated to just after a rollover, where the tree cut removed
        every marker), the fresh window continues from the latest archived window, as the
        rollover's own marker does; otherwise it is window 0."""
        if self.rollover_in_progress or self.windows.current is not None:
            return
        tree = self.tree
        archive = tree.archives.latest
        identity = tree.archived_identity(archive) if archive is not None else None
        if archive is None or identity is None:
            super().ensure_window()
            return
        marker = self.windows.next_window_marker(
            previous=tree.previous_window_ids(archive), identity=identity
        )
        self.send_marker(marker, trigger_turn=False)

    # -- hooks -----------------------------------------------------------------------------

    @hookimpl
    def ctx_input(self, session: HostSession, event: InputEvent) -> InputResult | None:
        if self.coordinator.hold_input(event.text):
            return InputResult(action="handled")
        return super().ctx_input(session, event)

    @hookimpl
    def ctx_agent_settled(self, session: HostSession) -> None:
        self.coordinator.settle()

    @hookimpl
    def ctx_session_tree(self, session: HostSession, event: TreeNavigationEvent) -> None:
        if self.coordinator.observe_tree_event(event):
            return
        # A navigation the user chose (the tools plugin resets the notebook for it): the
        # state follows the selected branch, which gets a window if it has none.
        self.ensure_window()

    @hookimpl
    def ctx_session_before_compact(
        self, session: HostSession, request: CompactionRequest
    ) -> CompactionDecision | None:
        if request.trigger == "threshold":
            # Windows end through new_context and the budget markers, not through Pi's cut.
            return CompactionDecision(cancel=True)
        if request.trigger == "manual":
            # Pi's own summary of the active path covers the archived summaries and the
            # current window: a readable, cumulative exit point.
            return None
        return self.no_summary_compaction(request)

    @hookimpl
    def ctx_session_compact(self, session: HostSession, event: CompactionEvent) -> None:
        if event.trigger == "manual" and not event.from_plugin:
            # After the readable summary, a fresh window without a turn: the safe point to
            # leave Tree mode.
            self.send_marker(self.windows.next_window_marker(), trigger_turn=False)
        elif event.trigger == "overflow" and is_no_summary_compaction(event.entry):
            try:
                self.coordinator.schedule()
            except RolloverError as error:
                session.ui.notify(FAILURE_PREFIX + str(error), "error")
