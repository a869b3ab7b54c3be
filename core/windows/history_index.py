"""The windows of the active branch, kept up to date entry by entry.

Every ``kind: "window"`` marker on the branch opens a window named by its
``currentWindowId``; the entries after it, up to the next window marker, are its items.
Entries before the first marker belong to no window (management was not on yet), and
reminder and fallback markers delimit nothing. A marker that repeats the current window's
id continues that window.

Feed :meth:`BranchHistoryIndex.observe` each entry appended to the branch (through
:class:`ctxmodes.windows.state.WindowState`, which also notices when the leaf moves);
rebuild with :meth:`BranchHistoryIndex.from_branch` after a navigation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ctxmodes.session.models import CustomMessageEntry, SessionEntry
from ctxmodes.windows.history_items import item_fields
from ctxmodes.windows.marker import (
    CONTEXT_WINDOW_CUSTOM_TYPE,
    MalformedMarkerError,
    parse_marker_details,
)
from ctxmodes.windows.window_log import LogWindow, WindowLog


class BranchHistoryIndex:
    """The active branch's windows and items; a :class:`HistorySource`."""

    __slots__ = ("_log",)

    def __init__(self) -> None:
        self._log = WindowLog()

    @classmethod
    def from_branch(cls, entries: Iterable[SessionEntry]) -> BranchHistoryIndex:
        index = cls()
        for entry in entries:
            index.observe(entry)
        return index

    def windows(self) -> Sequence[LogWindow]:
        return self._log.windows()

    @property
    def current_window(self) -> LogWindow | None:
        """The latest window on the branch (the one a rollover closes)."""
        return self._log.current

    def observe(self, entry: SessionEntry) -> None:
        """Account for the next entry of the branch."""
        if (
            isinstance(entry, CustomMessageEntry)
            and entry.custom_type == CONTEXT_WINDOW_CUSTOM_TYPE
        ):
            self._observe_marker(entry)
            return
        if self._log.current is None:
            return
        fields = item_fields(entry)
        if fields is not None:
            self._log.append_item(
                fields.item_id,
                fields.role,
                fields.content,
                fields.tool_name,
                fields.tool_namespace,
            )

    def _observe_marker(self, entry: CustomMessageEntry) -> None:
        try:
            details = parse_marker_details(entry.details).context_management
        except MalformedMarkerError:
            # History stays readable past a damaged marker; projection reports it.
            return
        if details.kind != "window":
            return
        current = self._log.current
        if current is None or current.window_id != details.current_window_id:
            self._log.open_window(details.current_window_id)
