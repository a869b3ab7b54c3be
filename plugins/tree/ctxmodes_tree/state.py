"""Everything Tree knows about one session, rebuilt from the file and then fed by appends.

:class:`TreeState` pairs the shared window state of the active branch (identity, budget,
notes and the active window's history, kept by
:class:`~ctxmodes.windows.state.TrackedWindowState`) with Tree's archive index and its
archived-window history. Both subscribe to the session manager, so an append costs O(1)
(plus one manifest verification when a rollover appends a manifest). When the leaf moves
(tree navigation), both re-read the new active branch on their next access; in Tree that
branch is short, because archived windows are side branches.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxmodes import SessionView
from ctxmodes.windows import (
    RECOVERY_USER_ITEM_LIMIT,
    HistoryReader,
    MalformedMarkerError,
    PreviousWindowIds,
    TrackedWindowState,
    WindowIdentity,
    WindowState,
    stored_marker_details,
)
from ctxmodes_tree.archive_history import ArchiveHistory
from ctxmodes_tree.archive_index import TreeArchiveIndex
from ctxmodes_tree.search_cache import SearchCache
from ctxmodes_tree.traversal import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    ArchiveRejection,
    VerifiedArchive,
)


class TreeState:
    """Window state and archives of one session's active branch (a ``WindowStateHolder``)."""

    def __init__(
        self,
        manager: SessionView,
        limits: ArchiveLimits = DEFAULT_LIMITS,
        *,
        on_rejected: Callable[[str, ArchiveRejection], None] | None = None,
    ) -> None:
        self._manager = manager
        self._windows = TrackedWindowState(manager)
        self.archives = TreeArchiveIndex(
            manager, limits, current_leaf=manager.get_leaf_id, on_rejected=on_rejected
        )
        # Read on first use, decoding only the branch's manifests.
        self.archives.follow_leaf(manager.get_leaf_id())
        self.archive_history = ArchiveHistory(self.archives, manager, SearchCache(manager))
        self._unsubscribe: Callable[[], None] | None = manager.subscribe(self.archives.observe)

    @property
    def manager(self) -> SessionView:
        return self._manager

    @property
    def state(self) -> WindowState:
        """The window state of the manager's current branch."""
        return self._windows.state

    def reader(self) -> HistoryReader:
        """History over the archived windows (summaries first), then the active branch's."""
        return self.state.reader(self.archive_history)

    def previous_window_ids(self, archive: VerifiedArchive) -> PreviousWindowIds:
        """What the hint of the window opened after ``archive`` names as the closed window:
        its id, its summary item and its most recent user items."""
        return PreviousWindowIds(
            window_id=archive.window_id,
            user_item_ids=self.archive_history.window_of(archive).recent_item_ids(
                "user", RECOVERY_USER_ITEM_LIMIT
            ),
            summary_item_id=archive.summary.id,
        )

    def archived_identity(self, archive: VerifiedArchive) -> WindowIdentity | None:
        """The identity of the window ``archive`` closed, read from its boundary marker
        (``None`` when the boundary is not that window's marker)."""
        stored = self._manager.get_entry_json(archive.manifest.boundary_entry_id)
        try:
            details = stored_marker_details(stored) if stored is not None else None
        except MalformedMarkerError:
            return None
        if details is None or details.kind != "window":
            return None
        if details.current_window_id != archive.window_id:
            return None
        return details.identity()

    def close(self) -> None:
        """Stop following the session's appends (and let go of the search cache)."""
        self._windows.close()
        self.archive_history.close()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
