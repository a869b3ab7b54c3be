"""A growing list of history windows whose items are appended in order.

:class:`WindowLog` is the storage behind every large history source: the active-branch
index of Local and Tree, and Tree's archive of completed windows. Items are appended to the
newest window; item text goes into one :class:`~ctxmodes.windows.text_arena.TextArena`, so a
search scans contiguous memory and each window is a range of it. Appending costs O(item);
listing, reading and searching never look at windows or items they do not return, except
that a search scans the text of the windows it covers.

Item fields are kept in one list per field rather than one object per item: a long history
then adds no object the garbage collector has to traverse (strings, ``None`` and booleans
are not tracked), so full collections stay as cheap as the rest of the process allows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ctxmodes.windows.history import HistoryItem, ItemFilter
from ctxmodes.windows.text_arena import TextArena


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
        roles, tool_names = log.roles, log.tool_names
        tool_namespaces, summaries = log.tool_namespaces, log.summaries
        for index in indexes:
            if item_filter.accepts_fields(
                roles[index], tool_names[index], tool_namespaces[index], summaries[index]
            ):
                yield log.item(index, self._window_id)

    def find_item(self, item_id: str) -> HistoryItem | None:
        log = self._log
        index = log.index_of(item_id)
        if index is not None and self._first <= index < self._end:
            return log.item(index, self._window_id)
        item_ids = log.item_ids
        for index in range(self._first, self._end):
            if item_ids[index].endswith(item_id):
                return log.item(index, self._window_id)
        return None

    def recent_item_ids(self, role: str, limit: int) -> list[str]:
        """Ids of the newest ``limit`` items with ``role``, newest first."""
        found: list[str] = []
        roles, item_ids = self._log.roles, self._log.item_ids
        for index in range(self._end - 1, self._first - 1, -1):
            if len(found) >= limit:
                break
            if roles[index] == role:
                found.append(item_ids[index])
        return found


class WindowLog:
    """Windows in order; items go to the newest one. A :class:`HistorySource`.

    Item ``i``'s fields are ``item_ids[i]``, ``roles[i]``, ``tool_names[i]``,
    ``tool_namespaces[i]`` and ``summaries[i]``; its content is ``arena.text(i)``.
    """

    __slots__ = (
        "_ids",
        "_windows",
        "arena",
        "item_ids",
        "roles",
        "summaries",
        "tool_names",
        "tool_namespaces",
    )

    def __init__(self) -> None:
        self.arena = TextArena()
        self.item_ids: list[str] = []
        self.roles: list[str] = []
        self.tool_names: list[str | None] = []
        self.tool_namespaces: list[str | None] = []
        self.summaries: list[bool] = []
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
        window = LogWindow(self, window_id, len(self.item_ids))
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
        self.item_ids.append(item_id)
        self.roles.append(role)
        self.tool_names.append(tool_name)
        self.tool_namespaces.append(tool_namespace)
        self.summaries.append(summary)
        # Entry ids are unique within a session file; if a file repeats one, the first wins.
        self._ids.setdefault(item_id, index)
        # The log owns its windows' ranges.
        window._end = index + 1

    def seal(self) -> None:
        """Pack the items so far for search, as a log that will not grow does (an archived
        window's); appending stays possible."""
        self.arena.seal()

    def index_of(self, item_id: str) -> int | None:
        return self._ids.get(item_id)

    def item(self, index: int, window_id: str) -> HistoryItem:
        return HistoryItem(
            window_id=window_id,
            item_id=self.item_ids[index],
            role=self.roles[index],
            content=self.arena.text(index),
            tool_name=self.tool_names[index],
            tool_namespace=self.tool_namespaces[index],
            summary=self.summaries[index],
        )
