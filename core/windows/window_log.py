"""A growing list of history windows whose items are appended in order.

:class:`WindowLog` is the storage behind every large history source: the active-branch
index of Local and Tree, and Tree's archive of completed windows. Items are appended to the
newest window; item text goes into one :class:`~ctxmodes.windows.text_arena.TextArena`, so a
search scans contiguous memory and each window is a range of it. Appending costs O(item);
listing, reading and searching never look at windows or items they do not return, except
that a search scans the text of the windows it covers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ctxmodes.windows.history import HistoryItem, ItemFilter
from ctxmodes.windows.text_arena import TextArena


@dataclass(frozen=True, slots=True)
class _ItemMeta:
    item_id: str
    role: str
    tool_name: str | None
    tool_namespace: str | None
    summary: bool


class LogWindow:
    """One window of a :class:`WindowLog`: the item range ``[first, end)``."""

    __slots__ = ("_end", "_first", "_log", "_window_id")

    def __init__(self, log: WindowLog, window_id: str, first: int) -> None:
        self._log = log
        self._window_id = window_id
        self._first = first
        self._end = first

    @property
    def window_id(self) -> str:
        return self._window_id

    @property
    def item_count(self) -> int:
        return self._end - self._first

    def select(self, item_filter: ItemFilter, *, reverse: bool = False) -> Iterator[HistoryItem]:
        log, first, end = self._log, self._first, self._end
        if item_filter.query:
            indexes: Iterator[int] = log.arena.search(
                item_filter.query, first, end, reverse=reverse
            )
        else:
            indexes = iter(range(end - 1, first - 1, -1) if reverse else range(first, end))
        metas = log.metas
        for index in indexes:
            meta = metas[index]
            if item_filter.accepts_fields(
                meta.role, meta.tool_name, meta.tool_namespace, meta.summary
            ):
                yield log.item(index, self._window_id)

    def find_item(self, item_id: str) -> HistoryItem | None:
        log = self._log
        index = log.index_of(item_id)
        if index is not None and self._first <= index < self._end:
            return log.item(index, self._window_id)
        for index in range(self._first, self._end):
            if log.metas[index].item_id.endswith(item_id):
                return log.item(index, self._window_id)
        return None

    def recent_item_ids(self, role: str, limit: int) -> list[str]:
        """Ids of the newest ``limit`` items with ``role``, newest first."""
        found: list[str] = []
        metas = self._log.metas
        for index in range(self._end - 1, self._first - 1, -1):
            if len(found) >= limit:
                break
            if metas[index].role == role:
                found.append(metas[index].item_id)
        return found


class WindowLog:
    """Windows in order; items go to the newest one. A :class:`HistorySource`."""

    __slots__ = ("_ids", "_windows", "arena", "metas")

    def __init__(self) -> None:
        self.arena = TextArena()
        self.metas: list[_ItemMeta] = []
        self._ids: dict[str, int] = {}
        self._windows: list[LogWindow] = []

    def windows(self) -> Sequence[LogWindow]:
        return self._windows

    @property
    def current(self) -> LogWindow | None:
        """The newest window (the one items are appended to)."""
        return self._windows[-1] if self._windows else None

    def open_window(self, window_id: str) -> LogWindow:
        """Start a new window; later items belong to it."""
        window = LogWindow(self, window_id, len(self.metas))
        self._windows.append(window)
        return window

    def append_item(
        self,
        item_id: str,
        role: str,
        content: str,
        tool_name: str | None = None,
        tool_namespace: str | None = None,
        *,
        summary: bool = False,
    ) -> None:
        """Add an item to the newest window (which must exist)."""
        window = self._windows[-1]
        index = self.arena.append(content)
        self.metas.append(_ItemMeta(item_id, role, tool_name, tool_namespace, summary))
        # Entry ids are unique within a session file; if a file repeats one, the first wins.
        self._ids.setdefault(item_id, index)
        # The log owns its windows' ranges.
        window._end = index + 1

    def index_of(self, item_id: str) -> int | None:
        return self._ids.get(item_id)

    def item(self, index: int, window_id: str) -> HistoryItem:
        meta = self.metas[index]
        return HistoryItem(
            window_id=window_id,
            item_id=meta.item_id,
            role=meta.role,
            content=self.arena.text(index),
            tool_name=meta.tool_name,
            tool_namespace=meta.tool_namespace,
            summary=meta.summary,
        )
