"""The archived windows as a history source: each one's hidden summary, then its raw work.

An archived window lists, in order:

1. the **summary item**: the Pi branch summary that closed the window (role ``assistant``,
   marked as a summary, so searches rank it first). Its id is the summary entry id, which is
   what the next window's marker names as ``summary_item_id``;
2. the archived entries, oldest first, normalized exactly as the active window's entries are
   (:func:`ctxmodes.windows.history_items.stored_item`; window markers contribute no item).

Cost model. Nothing here reads an archive before a call needs it. An archive's item count
(what ``list_windows`` reports) comes from the session index alone when its entries are
consecutive lines of the file, as a window's are unless it was branched inside: every
``message`` entry is an item and only custom messages are decoded, so a cold listing costs
O(archives) slicing of index lists, whatever the session's length. A listing or a search of a
cold window reads its stored entries a block at a time, only as far as the caller takes its
items: a search that finds its page in the newest archive costs the entries it read there,
not the archive's length nor the session's. A selection that reads a window to its end keeps
what it read as the window's own :class:`~ctxmodes.windows.window_log.WindowLog`, packed for
search, so the window is read from the file once (so does a read of one item by id); logs are
cached by manifest entry id (entries are immutable, so a navigation back to a branch reuses
what was built). Entries are read as stored, without decoding models, and the session does
not keep them.

A search whose query a window's gram filter rules out
(:mod:`ctxmodes_tree.search_cache`) does not read that window at all, and in a window that
may hold a hit it reads only the blocks of entries whose own filter lets the query pass
(:mod:`ctxmodes_tree.window_filter`), so a search that finds fewer hits than its page reads
only the blocks that may hold one. A window's filters are made when it is archived, or the
first time a call reads it to its end in a process that writes the session (which persists
them), as far as that process's reading pays for making them
(:meth:`~ctxmodes_tree.search_cache.SearchCache.make_lazily`).

Raw items are bounded per archive by :class:`~ctxmodes_tree.traversal.ArchiveLimits`: the
newest ``max_items`` entries, and of those the newest whose lines span at most ``max_bytes``
of the session file (the summary already covers the whole window). Both bounds are on entries as
stored, so the count and the items always agree.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any, Protocol

from ctxmodes.session import StoredRun, codec
from ctxmodes.windows import (
    HistoryItem,
    ItemFields,
    ItemFilter,
    LogWindow,
    WindowLog,
    stored_item,
)
from ctxmodes_tree.archive_index import TreeArchiveIndex
from ctxmodes_tree.search_cache import SearchCache
from ctxmodes_tree.traversal import ArchiveLimits, EntryGraph, VerifiedArchive
from ctxmodes_tree.window_filter import (
    SearchFilter,
    entries_to_read,
    window_filter_of,
)

#: The role of the summary item (the summarizer's words, as the original contract has it).
SUMMARY_ROLE = "assistant"


class ArchiveStore(EntryGraph, Protocol):
    """The reads archive history needs: the graph's, and the index's view of stored runs
    (:meth:`ctxmodes.SessionView.stored_run`)."""

    def stored_run(self, last_id: str, count: int) -> StoredRun | None:
        """The ``count`` entries ending at ``last_id``, from the index, or ``None``."""
        ...

    def read_entries_json(self, entry_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """Several entries as stored, read in one pass and not kept
        (:meth:`ctxmodes.SessionView.read_entries_json`)."""
        ...


class _Kept:
    """Which archived entries give raw items: ``entry_ids`` (oldest first), and how many
    items they give when the index tells it (counted on first use: a search needs only the
    ids)."""

    __slots__ = ("_count", "_run", "_store", "entry_ids")

    def __init__(
        self,
        entry_ids: Sequence[str],
        run: StoredRun | None = None,
        first: int = 0,
        store: ArchiveStore | None = None,
    ) -> None:
        self.entry_ids = entry_ids
        self._run = (run, first) if run is not None else None
        self._store = store
        self._count: int | None = None

    @property
    def item_count(self) -> int | None:
        """The raw items, counted from the index (``None`` when it cannot tell)."""
        if self._count is None and self._run is not None:
            assert self._store is not None
            run, first = self._run
            self._count = _count_items(run.types(first), self.entry_ids, self._store)
        return self._count


class ArchivedWindow:
    """One archived window: its summary item, then its raw items (a ``HistoryWindow``).

    The summary item comes straight from the verified archive; the raw items are normalized
    the first time something needs them. So reading the summary, or the summary pass of a
    search, costs nothing per archive, and a listing or read that names one window only
    normalizes that window.
    """

    __slots__ = ("_archive", "_cache", "_filter", "_graph", "_kept", "_limits", "_raw", "_summary")

    def __init__(
        self,
        archive: VerifiedArchive,
        graph: ArchiveStore,
        limits: ArchiveLimits,
        cache: SearchCache,
    ) -> None:
        self._archive = archive
        self._graph = graph
        self._limits = limits
        self._cache = cache
        self._kept: _Kept | None = None
        self._raw: LogWindow | None = None
        self._filter: SearchFilter | None = None
        self._summary = HistoryItem(
            window_id=archive.window_id,
            item_id=archive.summary.id,
            role=SUMMARY_ROLE,
            content=archive.summary.summary,
            summary=True,
        )

    @property
    def window_id(self) -> str:
        return self._archive.window_id

    @property
    def item_count(self) -> int:
        """The summary and the raw items, counted from the index when that suffices."""
        if self._raw is None:
            known = self._kept_entries().item_count
            if known is not None:
                return 1 + known
        return 1 + self.raw.item_count

    @property
    def raw(self) -> LogWindow:
        """The raw items (normalized on first use)."""
        if self._raw is None:
            items = _read_items(self._graph, self._kept_entries().entry_ids)
            self._raw = self._log([fields for _, fields in items])
        return self._raw

    def _log(self, fields: Sequence[ItemFields]) -> LogWindow:
        """Every raw item of the window, oldest first, as its packed log."""
        raw = _log(self._archive.window_id, fields)
        assert self._kept_entries().item_count in (None, raw.item_count)
        return raw

    def _kept_entries(self) -> _Kept:
        if self._kept is None:
            self._kept = _kept_entries(self._archive.entry_ids, self._graph, self._limits)
        return self._kept

    def select(self, item_filter: ItemFilter, *, reverse: bool = False) -> Iterator[HistoryItem]:
        summary_wanted = item_filter.summary is not False and item_filter.accepts(self._summary)
        if not reverse and summary_wanted:
            yield self._summary
        if item_filter.summary is not True and self._may_hold(item_filter.query):
            if self._raw is None:
                yield from self._stream(item_filter, reverse)
            else:
                yield from self._raw.select(item_filter, reverse=reverse)
        if reverse and summary_wanted:
            yield self._summary

    def _stream(self, item_filter: ItemFilter, reverse: bool) -> Iterator[HistoryItem]:
        """The raw items straight from the stored entries, read only as far as the caller
        takes them, and only from the blocks of entries whose filter lets the query pass:
        a page or a search hit in a cold window costs the entries read up to it, not the
        window. A caller that takes them all from the whole window has read it, and it
        then becomes its log."""
        window_id = self._archive.window_id
        query = item_filter.query
        kept = self._kept_entries().entry_ids
        found = self._search_filter() if query else None
        to_read = kept if found is None else entries_to_read(found, query, kept)
        started = time.perf_counter()
        read: list[tuple[int, ItemFields]] = []
        for position, fields in _read_items(self._graph, to_read, reverse=reverse):
            read.append((position, fields))
            if (query is None or query in fields.content) and item_filter.accepts_fields(
                fields.role, fields.tool_name, fields.tool_namespace, False
            ):
                yield HistoryItem(
                    window_id=window_id,
                    item_id=fields.item_id,
                    role=fields.role,
                    content=fields.content,
                    tool_name=fields.tool_name,
                    tool_namespace=fields.tool_namespace,
                )
        if self._raw is None and to_read is kept:
            if reverse:
                read.reverse()
            self._raw = self._log([fields for _, fields in read])
            # Asked again: the filter this search started with may have failed its check.
            if self._cache.persists and self._cache.filter_for(self._archive, kept) is None:
                self._cache.make_lazily(
                    time.perf_counter() - started, lambda: self._make_filter(read)
                )

    def _may_hold(self, query: str | None) -> bool:
        """Whether a raw item may contain ``query`` (``False`` only when none does)."""
        if not query:
            return True
        found = self._search_filter()
        return found is None or found.may_contain(query)

    def _search_filter(self) -> SearchFilter | None:
        if self._filter is None:
            self._filter = self._cache.filter_for(self._archive, self._kept_entries().entry_ids)
        return self._filter

    def _make_filter(self, items: Iterable[tuple[int, ItemFields]]) -> None:
        """Make the window's filter from all of its raw ``items`` (each with its entry's
        position among the kept entries), keep it and persist it."""
        kept = self._kept_entries().entry_ids
        texts = ((position, fields.content) for position, fields in items)
        found = window_filter_of(texts, len(kept))
        self._filter = found
        self._cache.remember(self._archive, kept, found)

    def index_contents(self) -> None:
        """Make and persist the window's gram filter now, unless one is known or it would
        not persist (once, when the window is archived): its raw items are read once and
        not kept."""
        if self._cache.persists and self._search_filter() is None:
            self._make_filter(_read_items(self._graph, self._kept_entries().entry_ids))

    def find_item(self, item_id: str) -> HistoryItem | None:
        # Exact ids first, then the first item (in window order) whose id ends with item_id.
        summary = self._summary
        if summary.item_id == item_id:
            return summary
        raw = self.raw.find_item(item_id)
        if raw is not None and raw.item_id == item_id:
            return raw
        if summary.item_id.endswith(item_id):
            return summary
        return raw

    def recent_item_ids(self, role: str, limit: int) -> list[str]:
        """Ids of the newest ``limit`` raw items with ``role``, newest first."""
        return self.raw.recent_item_ids(role, limit)


class ArchiveHistory:
    """The active branch's archived windows, oldest first: a ``HistorySource``."""

    __slots__ = ("_cache", "_graph", "_index", "_windows")

    def __init__(self, index: TreeArchiveIndex, graph: ArchiveStore, cache: SearchCache) -> None:
        self._index = index
        self._graph = graph
        self._cache = cache
        self._windows: dict[str, ArchivedWindow] = {}

    def windows(self) -> Sequence[ArchivedWindow]:
        return [self.window_of(archive) for archive in self._index.archives]

    def window_of(self, archive: VerifiedArchive) -> ArchivedWindow:
        """The history window of one archive (cached by manifest entry id)."""
        window = self._windows.get(archive.manifest_entry_id)
        if window is None:
            window = ArchivedWindow(archive, self._graph, self._index.limits, self._cache)
            self._windows[archive.manifest_entry_id] = window
        return window

    def close(self) -> None:
        """Let go of the search cache's file."""
        self._cache.close()


def _kept_entries(interval: Sequence[str], store: ArchiveStore, limits: ArchiveLimits) -> _Kept:
    """The newest entries within both bounds; their item count when the index tells it."""
    candidates = interval[len(interval) - min(len(interval), limits.max_items) :]
    run = store.stored_run(candidates[-1], len(candidates)) if candidates else None
    if run is None:
        # One byte per line break, as the lines of a file span them.
        sizes = [
            (len(codec.dumps(stored)) if stored is not None else 0) + 1
            for stored in _read_stored(store, candidates)
        ]
        return _Kept(candidates[_first_fitting(sizes, limits.max_bytes + 1) :])
    first = run.first_within(limits.max_bytes)
    return _Kept(candidates[first:], run, first, store)


def _count_items(types: Sequence[object], kept: Sequence[str], store: ArchiveStore) -> int:
    """The items of the entries ``kept``, whose stored types are ``types``: every message, and
    each custom message that gives one."""
    count = types.count("message")
    position = -1
    for _ in range(types.count("custom_message")):
        position = types.index("custom_message", position + 1)
        stored = store.get_entry_json(kept[position])
        count += stored is not None and stored_item(stored) is not None
    return count


def _first_fitting(sizes: Sequence[int], budget: int) -> int:
    """The first position from which the sizes, summed to the end, stay within ``budget``."""
    totals = list(accumulate(reversed(sizes)))
    return len(sizes) - bisect_right(totals, budget)


#: Entries read from the session file at a time, first and at most: a search that finds its
#: hits among the first entries reads few, a scan through a whole window reads long blocks.
_FIRST_BLOCK = 16
_LONGEST_BLOCK = 512


def _read_stored(
    store: ArchiveStore, entry_ids: Sequence[str], *, reverse: bool = False
) -> Iterator[dict[str, Any] | None]:
    """The stored entries of ``entry_ids`` in order (newest first with ``reverse``), read in
    growing blocks and not kept by the session."""
    total = len(entry_ids)
    done = 0
    block = _FIRST_BLOCK
    while done < total:
        size = min(block, total - done)
        if reverse:
            ids = list(entry_ids[total - done - size : total - done])
            ids.reverse()
        else:
            ids = list(entry_ids[done : done + size])
        yield from store.read_entries_json(ids)
        done += size
        block = min(block * 2, _LONGEST_BLOCK)


def _read_items(
    store: ArchiveStore, entry_ids: Sequence[str], *, reverse: bool = False
) -> Iterator[tuple[int, ItemFields]]:
    """The item fields of the entries that give an item, each with its entry's position in
    ``entry_ids``, in order (newest first with ``reverse``)."""
    positions = range(len(entry_ids))
    stored_entries = _read_stored(store, entry_ids, reverse=reverse)
    ordered = reversed(positions) if reverse else positions
    for position, stored in zip(ordered, stored_entries, strict=True):
        fields = stored_item(stored) if stored is not None else None
        if fields is not None:
            yield position, fields


def _log(window_id: str, fields: Sequence[ItemFields]) -> LogWindow:
    log = WindowLog()
    raw = log.open_window(window_id)
    for item in fields:
        log.append_item(item.item_id, item.role, item.content, item.tool_name, item.tool_namespace)
    log.seal()
    return raw
