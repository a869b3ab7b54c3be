"""The windows of the active branch, kept up to date entry by entry.

Every ``kind: "window"`` marker on the branch opens a window named by its
``currentWindowId``; the entries after it, up to the next window marker, are its items.
Entries before the first marker belong to no window (management was not on yet), and
reminder and fallback markers delimit nothing. A marker that repeats the current window's
id continues that window.

Feed :meth:`BranchHistoryIndex.observe_stored` each entry appended to the branch (through
:class:`ctxmodes.windows.state.WindowState`, which also notices when the leaf moves);
rebuild with :meth:`BranchHistoryIndex.from_stored_branch` after a navigation. Entries are
read in their stored form (:mod:`ctxmodes.windows.stored`); the ``observe`` and
``from_branch`` variants take entry models.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctxmodes.session.models import SessionEntry
from ctxmodes.windows.history_items import stored_item
from ctxmodes.windows.marker import MalformedMarkerError, stored_marker_details
from ctxmodes.windows.stored import StoredEntry, stored_form
from ctxmodes.windows.window_log import LogWindow, WindowLog


class BranchHistoryIndex:
    """The active branch's windows and items; a :class:`HistorySource`."""

    __slots__ = ("_log",)

    def __init__(self) -> None:
        self._log = WindowLog()

    @classmethod
    def from_stored_branch(cls, entries: Iterable[StoredEntry]) -> BranchHistoryIndex:
        index = cls()
        for entry in entries:
            index.observe_stored(entry)
        return index

    @classmethod
    def from_branch(cls, entries: Iterable[SessionEntry]) -> BranchHistoryIndex:
        return cls.from_stored_branch(map(stored_form, entries))

    def windows(self) -> Sequence[LogWindow]:
        return self._log.windows()

    @property
    def current_window(self) -> LogWindow | None:
        """The latest window on the branch (the one a rollover closes)."""
        return self._log.current

    def observe_stored(self, entry: StoredEntry) -> None:
        """Account for the next entry of the branch."""
        try:
            marker = stored_marker_details(entry)
        except MalformedMarkerError:
            # History stays readable past a damaged marker; projection reports it.
            return
        if marker is not None:
            current = self._log.current
            if marker.kind == "window" and (
                current is None or current.window_id != marker.current_window_id
            ):
                self._log.open_window(marker.current_window_id)
            return
        if self._log.current is None:
            return
        fields = stored_item(entry)
        if fields is not None:
            self._log.append_item(
                fields.item_id,
                fields.role,
                fields.content,
                fields.tool_name,
                fields.tool_namespace,
            )

    def observe(self, entry: SessionEntry) -> None:
        """:meth:`observe_stored` for an entry model."""
        self.observe_stored(stored_form(entry))
