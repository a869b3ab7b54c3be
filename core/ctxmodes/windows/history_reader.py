"""The four ``history`` operations over history sources.

History is read through *sources*: anything that lists its windows in order
(:class:`HistorySource`). Local mode has one source, the window index of the active branch
(:class:`ctxmodes.windows.history_index.BranchHistoryIndex`); Tree puts a source of
archived windows in front of it. :class:`HistoryReader` answers the four operations over
the concatenation of its sources, oldest window first:

* ``list_windows``: ``{window_id, item_count}`` per window (20 by default, at most 100).
* ``list_items`` / ``search_contents``: item previews (10 by default, at most 25), filtered
  by window, role, tool name and tool namespace; a search keeps items whose content contains
  the query (literal, case-sensitive). A preview holds at most 1,000 characters of content
  and a listing at most 8,000 characters of preview JSON (the first preview always fits).
  With ``summary_first`` (Tree) a search returns summary items before raw ones.
* ``read_item``: up to 8,000 characters of one item from ``offset_chars``, with the offset
  to continue from when more remains. An item is found by its exact id, or else by the
  first id ending with the given one.

Listings walk windows lazily in the requested direction and stop once enough previews are
collected, so the cost of a query that matches recent work does not grow with the session.
Characters are counted as the TypeScript extension counts them, in UTF-16 code units
(``length``, ``slice``), so an offset one of them issues pages correctly in the other; a
range boundary inside a surrogate pair moves to the pair's start instead of cutting the
character in half (:func:`ctxmodes.session.jsvalues.js_slice`). An ``agent_name`` other
than the current agent (``/root``, empty or absent) has no history: ``{"windows": []}`` or
``{"items": []}``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import NotRequired, TypedDict, cast

from ctxmodes.session import codec
from ctxmodes.session.jsvalues import js_length, js_slice
from ctxmodes.windows.history import (
    ANY_ITEM,
    HistoryItem,
    HistorySource,
    HistoryWindow,
    ItemFilter,
)

SOURCE = "pi-session"
#: The agent history belongs to; any other agent name has no history here.
CURRENT_AGENT = "/root"

DEFAULT_WINDOW_LIMIT = 20
MAX_WINDOW_LIMIT = 100
DEFAULT_ITEM_LIMIT = 10
MAX_ITEM_LIMIT = 25
PREVIEW_CHARS = 1_000
LIST_OUTPUT_LIMIT_CHARS = 8_000
READ_ITEM_LIMIT_CHARS = 8_000


class WindowSummary(TypedDict):
    window_id: str
    item_count: int


class ItemPreview(TypedDict):
    window_id: str
    item_id: str
    role: str
    tool_name: NotRequired[str]
    tool_namespace: NotRequired[str]
    truncated_content: str
    content_chars: int


class ItemRange(TypedDict):
    window_id: str
    item_id: str
    role: str
    tool_name: NotRequired[str]
    tool_namespace: NotRequired[str]
    content: str
    total_chars: int
    next_offset_chars: NotRequired[int]


class WindowsResult(TypedDict):
    source: NotRequired[str]
    windows: list[WindowSummary]


class ItemsResult(TypedDict):
    source: NotRequired[str]
    items: list[ItemPreview]


class ReadResult(TypedDict):
    source: str
    item: ItemRange | None


def is_current_agent(agent_name: object) -> bool:
    """Whether an ``agent_name`` argument means the agent whose history this is."""
    return agent_name is None or agent_name == "" or agent_name == CURRENT_AGENT


def _clamp(value: int, maximum: int) -> int:
    return max(0, min(value, maximum))


def _item_fields(item: HistoryItem) -> dict[str, object]:
    # Key order is the shared result format: ids, role, then the tool fields when set.
    fields: dict[str, object] = {
        "window_id": item.window_id,
        "item_id": item.item_id,
        "role": item.role,
    }
    if item.tool_name:
        fields["tool_name"] = item.tool_name
    if item.tool_namespace:
        fields["tool_namespace"] = item.tool_namespace
    return fields


def preview(item: HistoryItem, max_chars: int) -> ItemPreview:
    fields = _item_fields(item)
    fields["truncated_content"] = js_slice(item.content, 0, max_chars)[0]
    fields["content_chars"] = js_length(item.content)
    return cast(ItemPreview, fields)


def bounded_previews(items: Iterable[HistoryItem], limit: int, max_chars: int) -> list[ItemPreview]:
    """Previews of the first ``limit`` items, stopping before the previews' JSON would pass
    :data:`LIST_OUTPUT_LIMIT_CHARS` (the first preview is always kept)."""
    result: list[ItemPreview] = []
    size = 0
    if limit <= 0:
        return result
    for item in items:
        entry = preview(item, max_chars)
        entry_size = js_length(codec.dumps(entry).decode())
        if result and size + entry_size > LIST_OUTPUT_LIMIT_CHARS:
            break
        result.append(entry)
        size += entry_size
        if len(result) >= limit:
            break
    return result


class HistoryReader:
    """The four ``history`` operations over ``sources`` (concatenated, oldest first).

    :param summary_first: rank summary items before raw items in searches (Tree).
    """

    def __init__(self, sources: Sequence[HistorySource], *, summary_first: bool = False) -> None:
        self._sources = tuple(sources)
        self._summary_first = summary_first

    def windows(self) -> list[HistoryWindow]:
        return [window for source in self._sources for window in source.windows()]

    def window(self, window_id: str) -> HistoryWindow | None:
        """The first window with this exact id."""
        for source in self._sources:
            for window in source.windows():
                if window.window_id == window_id:
                    return window
        return None

    def list_windows(
        self,
        *,
        agent_name: object = None,
        limit: int = DEFAULT_WINDOW_LIMIT,
        recent_first: bool = False,
    ) -> WindowsResult:
        if not is_current_agent(agent_name):
            return {"windows": []}
        windows = self.windows()
        if recent_first:
            windows.reverse()
        return {
            "source": SOURCE,
            "windows": [
                {"window_id": window.window_id, "item_count": window.item_count}
                for window in windows[: _clamp(limit, MAX_WINDOW_LIMIT)]
            ],
        }

    def list_items(
        self,
        *,
        agent_name: object = None,
        window_id: str | None = None,
        item_filter: ItemFilter = ANY_ITEM,
        limit: int = DEFAULT_ITEM_LIMIT,
        max_chars_per_item: int = PREVIEW_CHARS,
        recent_first: bool = False,
    ) -> ItemsResult:
        """Previews of the items ``item_filter`` accepts (of one window, if given)."""
        if not is_current_agent(agent_name):
            return {"items": []}
        items = self._select(window_id, item_filter, recent_first)
        previews = bounded_previews(
            items, _clamp(limit, MAX_ITEM_LIMIT), _clamp(max_chars_per_item, PREVIEW_CHARS)
        )
        return {"source": SOURCE, "items": previews}

    def search_contents(
        self,
        query: str,
        *,
        agent_name: object = None,
        window_id: str | None = None,
        item_filter: ItemFilter = ANY_ITEM,
        limit: int = DEFAULT_ITEM_LIMIT,
        recent_first: bool = False,
    ) -> ItemsResult:
        """Previews of the items containing ``query`` (summary items first when the reader
        ranks summaries)."""
        if not is_current_agent(agent_name):
            return {"items": []}
        base = dataclasses.replace(item_filter, query=query or None, summary=None)
        items: Iterable[HistoryItem]
        if self._summary_first:
            items = itertools.chain.from_iterable(
                self._select(window_id, dataclasses.replace(base, summary=summary), recent_first)
                for summary in (True, False)
            )
        else:
            items = self._select(window_id, base, recent_first)
        previews = bounded_previews(items, _clamp(limit, MAX_ITEM_LIMIT), PREVIEW_CHARS)
        return {"source": SOURCE, "items": previews}

    def read_item(
        self,
        window_id: str,
        item_id: str,
        *,
        agent_name: object = None,
        offset_chars: int = 0,
        limit_chars: int = READ_ITEM_LIMIT_CHARS,
    ) -> ReadResult | ItemsResult:
        """A character range of one item (``item`` is ``None`` when it does not exist)."""
        if not is_current_agent(agent_name):
            return {"items": []}
        window = self.window(window_id)
        item = window.find_item(item_id) if window is not None and item_id else None
        if item is None:
            return {"source": SOURCE, "item": None}
        total = js_length(item.content)
        offset = _clamp(offset_chars, total)
        limit = _clamp(limit_chars, READ_ITEM_LIMIT_CHARS)
        content, _, end = js_slice(item.content, offset, offset + limit)
        fields = _item_fields(item)
        fields["content"] = content
        fields["total_chars"] = total
        if end < total:
            fields["next_offset_chars"] = end
        return {"source": SOURCE, "item": cast(ItemRange, fields)}

    def _select(
        self, window_id: str | None, item_filter: ItemFilter, recent_first: bool
    ) -> Iterator[HistoryItem]:
        windows = self.windows()
        if window_id is not None:
            windows = [window for window in windows if window.window_id == window_id]
        if recent_first:
            windows.reverse()
        for window in windows:
            yield from window.select(item_filter, reverse=recent_first)
