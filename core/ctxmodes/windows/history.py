"""History items, windows and sources: the model the ``history`` operations read.

A *source* lists windows in order, oldest first (:class:`HistorySource`); a window lists its
items and can find one by id (:class:`HistoryWindow`). Local mode has one source, the window
index of the active branch (:class:`ctxmodes.windows.history_index.BranchHistoryIndex`);
Tree puts a source of archived windows in front of it. Large sources keep their text in a
:class:`ctxmodes.windows.window_log.WindowLog`; :class:`ItemWindow` and
:class:`StaticSource` are plain in-memory versions for small ones.
:class:`ctxmodes.windows.history_reader.HistoryReader` answers the operations.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One normalized history item.

    ``item_id`` is the session entry id (or another opaque id its source chooses);
    ``summary`` marks Tree's hidden branch-summary items.
    """

    window_id: str
    item_id: str
    role: str
    content: str
    tool_name: str | None = None
    tool_namespace: str | None = None
    summary: bool = False


@dataclass(frozen=True, slots=True)
class ItemFilter:
    """Which items a listing considers; ``None`` fields do not filter.

    ``query`` keeps items whose content contains it; ``summary`` keeps only summary items
    (``True``) or only raw items (``False``).
    """

    role: str | None = None
    tool_name: str | None = None
    tool_namespace: str | None = None
    query: str | None = None
    summary: bool | None = None

    def accepts_fields(
        self, role: str, tool_name: str | None, tool_namespace: str | None, summary: bool
    ) -> bool:
        """Whether an item with these fields passes every filter except ``query``."""
        return (
            (self.role is None or role == self.role)
            and (self.tool_name is None or tool_name == self.tool_name)
            and (self.tool_namespace is None or tool_namespace == self.tool_namespace)
            and (self.summary is None or summary is self.summary)
        )

    def accepts(self, item: HistoryItem) -> bool:
        return self.accepts_fields(
            item.role, item.tool_name, item.tool_namespace, item.summary
        ) and (self.query is None or self.query in item.content)


#: The filter that accepts every item.
ANY_ITEM = ItemFilter()


class HistoryWindow(Protocol):
    """A window as the reader sees it."""

    @property
    def window_id(self) -> str: ...

    @property
    def item_count(self) -> int: ...

    def select(self, item_filter: ItemFilter, *, reverse: bool = False) -> Iterator[HistoryItem]:
        """The items ``item_filter`` accepts, oldest first (newest first with ``reverse``),
        produced lazily."""
        ...

    def find_item(self, item_id: str) -> HistoryItem | None:
        """The item whose id is ``item_id``, else the first whose id ends with it."""
        ...


class HistorySource(Protocol):
    """An ordered collection of windows (oldest first)."""

    def windows(self) -> Sequence[HistoryWindow]: ...


class ItemWindow:
    """A window holding its items as a list: for small sources such as Tree's archives."""

    __slots__ = ("_items", "_window_id")

    def __init__(self, window_id: str, items: Iterable[HistoryItem] = ()) -> None:
        self._window_id = window_id
        self._items = list(items)

    @property
    def window_id(self) -> str:
        return self._window_id

    @property
    def item_count(self) -> int:
        return len(self._items)

    def append(self, item: HistoryItem) -> None:
        self._items.append(item)

    def select(self, item_filter: ItemFilter, *, reverse: bool = False) -> Iterator[HistoryItem]:
        items = reversed(self._items) if reverse else iter(self._items)
        return (item for item in items if item_filter.accepts(item))

    def find_item(self, item_id: str) -> HistoryItem | None:
        return find_item(self._items, item_id)


@dataclass(frozen=True, slots=True)
class StaticSource:
    """A fixed list of windows."""

    window_list: Sequence[HistoryWindow]

    def windows(self) -> Sequence[HistoryWindow]:
        return self.window_list


def find_item(items: Iterable[HistoryItem], item_id: str) -> HistoryItem | None:
    """Exact id first; otherwise the first item whose id ends with ``item_id``."""
    suffix_match: HistoryItem | None = None
    for item in items:
        if item.item_id == item_id:
            return item
        if suffix_match is None and item.item_id.endswith(item_id):
            suffix_match = item
    return suffix_match
