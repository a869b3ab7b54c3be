"""The archived windows as a history source: each one's hidden summary, then its raw work.

An archived window lists, in order:

1. the **summary item**: the Pi branch summary that closed the window (role ``assistant``,
   marked as a summary, so searches rank it first). Its id is the summary entry id, which is
   what the next window's marker names as ``summary_item_id``;
2. the archived entries, oldest first, normalized exactly as the active window's entries are
   (:func:`ctxmodes.windows.history_items.stored_item`; window markers contribute no item).

Each archive's raw items are normalized once, the first time history needs them, into its
own :class:`~ctxmodes.windows.window_log.WindowLog`, and cached by manifest entry id: entries
are immutable, so a navigation back to a branch reuses what was already built. Normalizing
reads the entries as stored, without decoding models, and packs the finished log for search.
Raw items are bounded per archive by :class:`~ctxmodes_tree.traversal.ArchiveLimits`; when an
archive holds more, its newest items are kept (the summary already covers the whole window).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ctxmodes.windows import HistoryItem, ItemFields, ItemFilter, LogWindow, WindowLog, stored_item
from ctxmodes_tree.archive_index import TreeArchiveIndex
from ctxmodes_tree.traversal import ArchiveLimits, EntryGraph, VerifiedArchive

#: The role of the summary item (the summarizer's words, as the original contract has it).
SUMMARY_ROLE = "assistant"


class ArchivedWindow:
    """One archived window: its summary item, then its raw items (a ``HistoryWindow``).

    The summary item comes straight from the verified archive; the raw items are normalized
    the first time something needs them. So reading the summary, or the summary pass of a
    search, costs nothing per archive, and a listing or read that names one window only
    normalizes that window.
    """

    __slots__ = ("_archive", "_graph", "_limits", "_raw", "_summary")

    def __init__(self, archive: VerifiedArchive, graph: EntryGraph, limits: ArchiveLimits) -> None:
        self._archive = archive
        self._graph = graph
        self._limits = limits
        self._raw: LogWindow | None = None
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
        return 1 + self.raw.item_count

    @property
    def raw(self) -> LogWindow:
        """The raw items (normalized on first use)."""
        if self._raw is None:
            self._raw = _normalize(self._archive, self._graph, self._limits)
        return self._raw

    def select(self, item_filter: ItemFilter, *, reverse: bool = False) -> Iterator[HistoryItem]:
        summary_wanted = item_filter.summary is not False and item_filter.accepts(self._summary)
        if not reverse and summary_wanted:
            yield self._summary
        if item_filter.summary is not True:
            yield from self.raw.select(item_filter, reverse=reverse)
        if reverse and summary_wanted:
            yield self._summary

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

    __slots__ = ("_graph", "_index", "_windows")

    def __init__(self, index: TreeArchiveIndex, graph: EntryGraph) -> None:
        self._index = index
        self._graph = graph
        self._windows: dict[str, ArchivedWindow] = {}

    def windows(self) -> Sequence[ArchivedWindow]:
        return [self.window_of(archive) for archive in self._index.archives]

    def window_of(self, archive: VerifiedArchive) -> ArchivedWindow:
        """The history window of one archive (cached by manifest entry id)."""
        window = self._windows.get(archive.manifest_entry_id)
        if window is None:
            window = ArchivedWindow(archive, self._graph, self._index.limits)
            self._windows[archive.manifest_entry_id] = window
        return window


def _normalize(archive: VerifiedArchive, graph: EntryGraph, limits: ArchiveLimits) -> LogWindow:
    interval = archive.entry_ids
    count = min(len(interval), limits.max_items)
    kept: list[ItemFields] = []
    chars = 0
    # Newest first, reading only as far back as the bounds allow.
    for entry_id in reversed(interval[len(interval) - count :]):
        entry = graph.get_entry_json(entry_id)
        fields = stored_item(entry) if entry is not None else None
        if fields is None:
            continue
        if chars + len(fields.content) > limits.max_chars:
            break
        kept.append(fields)
        chars += len(fields.content)
    log = WindowLog()
    raw = log.open_window(archive.window_id)
    for fields in reversed(kept):
        log.append_item(
            fields.item_id, fields.role, fields.content, fields.tool_name, fields.tool_namespace
        )
    log.seal()
    return raw
