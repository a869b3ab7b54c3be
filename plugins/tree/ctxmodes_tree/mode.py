"""The parts of the Tree mode.

Tree shares every model-facing behaviour with the other managed modes (the kit's
:class:`~ctxmodes.windows.ManagedMode`: window 0 on the first input, budget markers, the
four context tools, developer-role markers, namespace routing). Its parts:

* state: the window state is joined by the archive index of the active branch
  (:class:`~ctxmodes_tree.state.TreeState`), which is also the history: archived windows
  first, each with its hidden summary;
* projection: owned branch summaries are filtered out; the tree has already cut the old
  windows (:mod:`ctxmodes_tree.projection`);
* rollover: two phases, finished once the run has settled
  (:mod:`ctxmodes_tree.coordinator`); input submitted meanwhile is held; the user's own
  ``/tree`` moves are followed (fresh window when needed), the rollover's internal
  navigation is recognised and left alone;
* compaction: threshold compaction is cancelled; manual ``/compact`` lets Pi write its
  readable cumulative summary and then opens a fresh window (the safe point to leave Tree);
  an overflow writes the fixed no-summary compaction and rolls over;
* forks: a fork keeps Pi's semantics (only the active path is copied), so the archived
  windows stay in the original file; the user is told once, when the fork starts.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes import (
    CompactionDecision,
    CompactionEvent,
    CompactionRequest,
    ContextProjection,
    HostSession,
    InputEvent,
    NewContextOutcome,
    NewContextRequest,
    TreeNavigationEvent,
)
from ctxmodes.session import AgentMessage
from ctxmodes.windows import (
    LocalRetrieval,
    ManagedMode,
    WindowMarker,
    WindowStrategies,
    is_no_summary_compaction,
)
from ctxmodes_tree.coordinator import FAILURE_PREFIX, RolloverCoordinator, RolloverError
from ctxmodes_tree.projection import project_tree_context
from ctxmodes_tree.settings import TreeSettings
from ctxmodes_tree.state import TreeState
from ctxmodes_tree.traversal import ArchiveRejection

ARCHIVE_REJECTED = "Tree archive {id} is unavailable: {reason}"

#: Why an archive of a forked session is unavailable: its window is not in the file.
_NOT_IN_FILE = frozenset({ArchiveRejection.MISSING_PARENT, ArchiveRejection.NO_BRANCH_BASE})


def fork_notice(missing: int) -> str:
    """What a forked session tells the user about the archived windows it left behind."""
    windows = "window" if missing == 1 else "windows"
    return (
        f"This fork holds only the active path: {missing} archived {windows} stayed in the "
        "original session, so history here starts at the fork (the original session still "
        "has them)."
    )


class RejectionReport:
    """Tells the user, once per manifest and session, that an archive is unavailable: the
    model then sees the summary that manifest claims, and history cannot read its window.
    While a fork starts, the archives whose windows stayed in the original file are only
    counted, for one notice."""

    def __init__(self, session: HostSession) -> None:
        self._session = session
        self._fork_missing: int | None = None

    def __call__(self, manifest_id: str, reason: ArchiveRejection) -> None:
        if self._fork_missing is not None and reason in _NOT_IN_FILE:
            self._fork_missing += 1
            return
        message = ARCHIVE_REJECTED.format(id=manifest_id, reason=reason)
        self._session.ui.notify(message, "warning")

    def report_fork(self, tree: TreeState) -> None:
        """A fork holds only the active path (as Pi's createBranchedSession): the archived
        side branches stayed in the original file, and the user should know."""
        self._fork_missing = 0
        try:
            tree.archives.has_rejections()  # reads the branch, reporting rejections
            missing = self._fork_missing
        finally:
            self._fork_missing = None
        if missing:
            self._session.ui.notify(fork_notice(missing), "warning")


class TreeProjection:
    def __init__(self, tree: TreeState) -> None:
        self._tree = tree

    def project(self, projection: ContextProjection) -> list[AgentMessage]:
        return project_tree_context(projection, self._tree.archives)


class TreeRollover:
    """``new_context`` schedules; the settled run archives (see the coordinator)."""

    def __init__(
        self, mode: ManagedMode, tree: TreeState, coordinator: RolloverCoordinator
    ) -> None:
        self._mode = mode
        self._tree = tree
        self.coordinator = coordinator

    @property
    def in_progress(self) -> bool:
        return self.coordinator.busy

    def request(self, request: NewContextRequest) -> NewContextOutcome:
        try:
            return self.coordinator.schedule()
        except RolloverError as error:
            return NewContextOutcome(started=False, message=str(error), details={"started": False})

    def projected(self, messages: Sequence[AgentMessage]) -> None:
        return None

    def hold_input(self, event: InputEvent) -> bool:
        return self.coordinator.hold_input(event)

    def settle(self) -> None:
        self.coordinator.settle()

    def navigated(self, event: TreeNavigationEvent) -> bool:
        # A navigation the user chose is not the rollover's (the tools plugin resets the
        # notebook for it); the kit then opens a window on the selected branch if needed.
        return self.coordinator.observe_tree_event(event)

    def fresh_window(self) -> WindowMarker | None:
        """When the branch's windows were all archived (the user navigated to just after a
        rollover, where the tree cut removed every marker), the fresh window continues from
        the latest archived window, as the rollover's own marker does; otherwise it is
        window 0."""
        windows = self._mode.windows
        if windows.current is not None:
            return None
        archive = self._tree.archives.latest
        identity = self._tree.archived_identity(archive) if archive is not None else None
        if archive is None or identity is None:
            return windows.initial_window_marker()
        return windows.next_window_marker(
            previous=self._tree.previous_window_ids(archive), identity=identity
        )


class TreeCompaction:
    def __init__(self, mode: ManagedMode, coordinator: RolloverCoordinator) -> None:
        self._mode = mode
        self._coordinator = coordinator

    def before_compact(self, request: CompactionRequest) -> CompactionDecision | None:
        if request.trigger == "threshold":
            # Windows end through new_context and the budget markers, not through Pi's cut.
            return CompactionDecision(cancel=True)
        if request.trigger == "manual":
            # Pi's own summary of the active path covers the archived summaries and the
            # current window: a readable, cumulative exit point.
            return None
        return self._mode.no_summary_compaction(request)

    def compacted(self, event: CompactionEvent) -> None:
        if event.trigger == "manual" and not event.from_plugin:
            # After the readable summary, a fresh window without a turn: the safe point to
            # leave Tree mode.
            self._mode.send_marker(self._mode.windows.next_window_marker(), trigger_turn=False)
        elif event.trigger == "overflow" and is_no_summary_compaction(event.entry):
            try:
                self._coordinator.schedule()
            except RolloverError as error:
                self._mode.session.ui.notify(FAILURE_PREFIX + str(error), "error")


def tree_mode(session: HostSession, settings: TreeSettings | None = None) -> ManagedMode:
    """Tree mode for one session (built by the mode registry when the session starts)."""
    chosen = settings if settings is not None else TreeSettings()

    def assemble(mode: ManagedMode) -> WindowStrategies:
        report = RejectionReport(mode.session)
        tree = TreeState(mode.session.session_manager, chosen.limits(), on_rejected=report)
        if mode.start_reason == "fork":
            report.report_fork(tree)
        coordinator = RolloverCoordinator(mode, tree)
        return WindowStrategies.defaults(
            mode,
            state=tree,
            projection=TreeProjection(tree),
            rollover=TreeRollover(mode, tree, coordinator),
            compaction=TreeCompaction(mode, coordinator),
            retrieval=LocalRetrieval(mode, history=tree),
        )

    return ManagedMode(session, assemble)
