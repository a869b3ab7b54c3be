"""The in-memory index of one session: entries by position, id and parent, decoded lazily.

Entries are numbered in file order (header and skipped lines excluded). For each entry the
index keeps its id, its parent's index and its type; the entry itself is decoded from the file
the first time something needs it and cached (an entry appended since the file was read, from
the line written for it). Everything here updates in O(1) per appended entry, so per-turn work
never grows with the size of the session.

Lookups follow Pi: the id index keeps the *last* entry of a duplicated id; a missing, empty or
unknown ``parentId`` ends a walk towards the root. Parent links that form a cycle (which makes
Pi loop forever) are cut when the file is indexed: the cycle's first entry in file order is
treated as a root, and the cut is reported.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, filterfalse, repeat
from operator import attrgetter, ne
from typing import Any, Final

import msgspec
import orjson

from ctxmodes.session import codec
from ctxmodes.session.errors import SessionChangedError
from ctxmodes.session.index_arrays import consecutive
from ctxmodes.session.jsvalues import js_truthy
from ctxmodes.session.migrate import rename_hook_message
from ctxmodes.session.reader import (
    MESSAGE_BEARING_TYPES,
    LineEnds,
    ScanResult,
    is_bare_entry,
    resolve_parents,
    shared_type,
)

__all__ = ["ActivePath", "EntryTable", "IndexWarning"]

JsonObject = dict[str, Any]

NO_ENTRY: Final = -1
_MEMO_STRIDE: Final = 64
# Reading neighbouring lines in one call is cheaper than one call per line up to this gap.
_MAX_READ_GAP: Final = 64 * 1024
# Lookups by id answered by searching the id list before a map of every id is built.
_LOOKUPS_WITHOUT_MAP: Final = 16
_SEARCH_BLOCK: Final = 4096
# Entries this close in file order are decoded together, with the few in between.
_RUN_GAP: Final = 4
_RUN_LENGTH: Final = 512
# Consecutive entries whose roles are read as one block of the file (fewer are read one by
# one), and the most entries and bytes read at once.
_ROLE_BLOCK_LEAST: Final = 32
_ROLE_BLOCK_MOST: Final = 4096
_ROLE_BLOCK_BYTES: Final = 8 << 20
# A warning stays one readable line even for a cycle through thousands of entries.
_CYCLE_NAMES_SHOWN: Final = 8


def find_last(
    values: list[Any] | array[int], value: Any, start: int = 0, stop: int | None = None
) -> int:
    """The position of the last ``value`` in ``values[start:stop]`` (``NO_ENTRY`` if none).

    Searched in C a block at a time from the end: what the index looks for (a recent entry,
    the latest entry of a type) is usually near it, and a miss costs one pass in C."""
    end = len(values) if stop is None else stop
    for block_end in range(end, start, -_SEARCH_BLOCK):
        block_start = max(start, block_end - _SEARCH_BLOCK)
        block = values[block_start:block_end]
        block.reverse()
        try:
            return block_end - 1 - block.index(value)
        except ValueError:
            continue
    return NO_ENTRY


@dataclass(frozen=True, slots=True)
class IndexWarning:
    """Something structurally wrong with the session that does not stop it from loading."""

    message: str

    def __str__(self) -> str:
        return self.message


class _RoleOnly(msgspec.Struct, gc=False):
    role: Any = None


class _MessageRole(msgspec.Struct, gc=False):
    """The part of a ``message`` entry a one-line listing shows: msgspec validates the rest
    of the line without building it."""

    id: Any = None
    message: _RoleOnly | None = None


_decode_message_role: Final = msgspec.json.Decoder(_MessageRole).decode
_decode_message_role_lines: Final = msgspec.json.Decoder(_MessageRole).decode_lines
_HEAD_ID: Final = attrgetter("id")


class _NeedsFullDecoder(Exception):
    """A line that only the full decoder reads as ``JSON.parse`` does."""


def _loads_to_restringify(line: bytes | memoryview) -> Any:
    try:
        return codec.loads_to_restringify(line)
    except codec.JsonDecodeError:
        raise _NeedsFullDecoder from None


def _role_of(entry: JsonObject) -> Any:
    message = entry.get("message")
    return message.get("role") if isinstance(message, dict) else None


def _stretches(indexes: Sequence[int], most: int) -> Iterator[tuple[int, int]]:
    """The positions ``(start, stop)`` of each stretch of consecutive entries in ``indexes``,
    at most ``most`` long."""
    count = len(indexes)
    if isinstance(indexes, range) and indexes.step == 1:
        for start in range(0, count, most):
            yield start, min(start + most, count)
        return
    start = 0
    while start < count:
        stop, limit, first = start + 1, min(start + most, count), indexes[start] - start
        while stop < limit and indexes[stop] == first + stop:
            stop += 1
        yield start, stop
        start = stop


class _LineReader:
    """Reads stored lines back from the session file by byte offset."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._fd: int | None = None  # set first: __del__ runs even if the open fails
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def read_spans(self, spans: Sequence[tuple[int, int]]) -> list[memoryview]:
        """Return the bytes of each ``(start, end)`` span (spans sorted by start)."""
        if self._fd is None:
            raise SessionChangedError("the session was closed")
        out: list[memoryview] = []
        group_start = 0
        while group_start < len(spans):
            group_end = group_start + 1
            while (
                group_end < len(spans)
                and spans[group_end][0] - spans[group_end - 1][1] <= _MAX_READ_GAP
            ):
                group_end += 1
            first = spans[group_start][0]
            last = spans[group_end - 1][1]
            block = memoryview(os.pread(self._fd, last - first, first))
            if len(block) != last - first:
                raise SessionChangedError("the session file is shorter than when it was opened")
            out.extend(
                block[start - first : end - first] for start, end in spans[group_start:group_end]
            )
            group_start = group_end
        return out

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # Not weakref.finalize: that registers an exit handler, and a program with one has to
    # be torn down in full when it ends (see ctxmodes.cli.run).
    def __del__(self) -> None:
        self.close()


class EntryTable:
    """Entries of one session in file order, with id, parent and type indexes."""

    def __init__(
        self,
        scan: ScanResult,
        *,
        reader: _LineReader | None = None,
    ) -> None:
        """Index what :func:`~ctxmodes.session.reader.scan_file` found (see ``from_*``)."""
        self.ids = scan.ids
        self.parent_ids = scan.parents
        self.types = scan.types
        self._by_id: dict[str, int] | None = None
        #: Whether some id is used by more than one entry (then the map of ids is built at
        #: once: every link resolves through it).
        self.duplicated = scan.duplicated
        self._lookups = 0
        self.parents = scan.parent_indexes
        self._decoded = scan.decoded
        #: Entries of a message-bearing type that project to no message.
        self.bare = scan.bare
        self._starts = scan.starts
        self._ends = scan.ends
        # Entries appended since the file was read, as the line written for each (decoded
        # when something reads them, like lines in the file): bytes are not tracked by the
        # garbage collector, whose passes would otherwise walk every entry appended so far.
        self._appended: dict[int, bytes] = {}
        self._reader = reader
        self._keep = True
        self._rename_hooks = scan.rename_hook_messages
        #: True when the stored lines are not the entries as indexed (an old file migrated).
        self.migrated = scan.original_version < 3
        self.warnings: list[IndexWarning] = []
        #: Entries whose parent link was cut to break a cycle.
        self.cut_roots: set[int] = set()
        # Sorted indexes where a run of "parent is the previous entry" links starts; paths
        # are walked a run at a time.
        self._breaks = self._find_breaks(sorted(set(scan.unresolved)))
        self._resolve_late_parents()
        self._report_duplicates()
        # label target id -> (label, timestamp); insertion order as in Pi's map.
        self.labels: dict[str, tuple[Any, Any]] = {}
        for index in scan.label_indexes:
            self._apply_label(self.entry(index))
        self.last_session_info = scan.last_session_info
        self._children: dict[str, list[int]] | None = None
        self._nearest: dict[str, dict[int, int]] = {}

    @classmethod
    def from_scan(
        cls, scan: ScanResult, path: str | os.PathLike[str] | None, *, keep: bool = True
    ) -> EntryTable:
        """Index a scanned file; undecoded entries are read back from ``path`` on demand, and
        kept once decoded unless ``keep`` is false (a look that reads each entry about once:
        memory stays bounded by the index)."""
        needs_reader = path is not None and len(scan.decoded) < len(scan.ids)
        table = cls(scan, reader=_LineReader(path) if needs_reader and path is not None else None)
        table._keep = keep
        return table

    @classmethod
    def from_entries(cls, entries: Iterable[JsonObject]) -> EntryTable:
        """Index entries held in memory (already migrated, every one with a string id)."""
        scan = ScanResult()
        for entry in entries:
            index = len(scan.ids)
            parent = entry.get("parentId")
            entry_type = entry.get("type")
            scan.decoded[index] = entry
            scan.ids.append(entry["id"])
            scan.parents.add(index, parent if isinstance(parent, str) else None)
            scan.types.append(shared_type(entry_type))
            scan.starts.append(-1)
            scan.ends.add(index, -1, index, -1)
            if is_bare_entry(entry_type, entry):
                scan.bare.add(index)
            if entry_type == "label":
                scan.label_indexes.append(index)
            elif entry_type == "session_info":
                scan.last_session_info = index
        scan.unresolved = list(range(len(scan.ids)))
        scan.parent_indexes = array("q", [NO_ENTRY]) * len(scan.ids)
        resolve_parents(scan)
        return cls(scan)

    # ----------------------------------------------------------------------- structure

    def _resolve_late_parents(self) -> None:
        """Re-resolve links to duplicated ids, then cut parent cycles.

        Entries are appended after their parent, so only a link to the same or a later entry
        can close a cycle.
        """
        parents = self.parents
        if self.duplicated:
            by_id = self.by_id
            # With duplicated ids every link resolves to the last entry of that id, as in Pi
            # (including links to the entry just before, which the scan assumed).
            for index, parent_id in enumerate(self.parent_ids):
                parents[index] = by_id.get(parent_id, NO_ENTRY) if parent_id else NO_ENTRY
            self._breaks = self._find_breaks()
        forward_links = [index for index in self._breaks if parents[index] >= index]
        if not forward_links:
            return
        settled: set[int] = set()
        for start in forward_links:
            if parents[start] < start:
                continue
            trail: list[int] = []
            on_trail: set[int] = set()
            current = start
            while current != NO_ENTRY and current not in settled and current not in on_trail:
                trail.append(current)
                on_trail.add(current)
                current = parents[current]
            if current != NO_ENTRY and current in on_trail:
                cycle = trail[trail.index(current) :]
                root = min(cycle)
                parents[root] = NO_ENTRY
                self.cut_roots.add(root)
                names = " -> ".join(self.ids[i] for i in cycle[:_CYCLE_NAMES_SHOWN])
                if len(cycle) > _CYCLE_NAMES_SHOWN:
                    names += f" -> … ({len(cycle)} entries)"
                self.warnings.append(
                    IndexWarning(
                        f"parent links form a cycle ({names}); entry {self.ids[root]} "
                        "is treated as a root"
                    )
                )
            settled.update(trail)
        self._breaks = self._find_breaks()

    def _find_breaks(self, candidates: list[int] | None = None) -> list[int]:
        """Entries whose parent is not the entry just before them (always including 0), among
        ``candidates`` (sorted; default: every entry)."""
        count = len(self.parents)
        parents = self.parents
        if candidates is None:
            # C-level passes: compare every parent index with its own index minus one.
            breaks = list(compress(range(count), map(ne, parents, range(-1, count - 1))))
        else:
            breaks = [index for index in candidates if parents[index] != index - 1]
        if count and (not breaks or breaks[0] != 0):
            breaks.insert(0, 0)
        return breaks

    def _report_duplicates(self) -> None:
        """One warning per duplicated id, however often it repeats."""
        if not self.duplicated:
            return
        uses: dict[str, int] = {}
        for entry_id in self.ids:
            uses[entry_id] = uses.get(entry_id, 0) + 1
        for entry_id, count in uses.items():
            if count > 1:
                winner = self.by_id[entry_id]
                self.warnings.append(
                    IndexWarning(
                        f"entry id {entry_id} is used {count} times; lookups find the last one "
                        f"(entry #{winner + 1} in file order), earlier ones are only reachable "
                        "by position"
                    )
                )

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def by_id(self) -> dict[str, int]:
        """id -> index of the last entry with that id, as Pi's map of ids (built when first
        asked for: opening a session to read it needs only a few lookups)."""
        if self._by_id is None:
            self._by_id = dict(zip(self.ids, range(len(self.ids)), strict=True))
        return self._by_id

    def index_of(self, entry_id: str | None) -> int | None:
        if entry_id is None:
            return None
        if self._by_id is None and self._lookups < _LOOKUPS_WITHOUT_MAP:
            # Without duplicated ids an id has one entry, found by a C-level search of the
            # list from its end (ids looked up are mostly recent ones): the few lookups of a
            # read need no map of every id.
            self._lookups += 1
            found = find_last(self.ids, entry_id)
            return None if found == NO_ENTRY else found
        return self.by_id.get(entry_id)

    def path_to(self, index: int) -> list[int]:
        """Indexes from the root to ``index`` (inclusive), following parent links."""
        return list(self.path_array(index))

    def path_array(self, index: int) -> array[int]:
        """:meth:`path_to` as machine integers: 8 bytes an entry instead of ~40 for a list of
        ``int`` objects, which a path of a million entries would cost."""
        path = array("q")
        for run in self.path_runs(index):
            path += consecutive(run.start, run.stop)
        return path

    def path_runs(self, index: int | None) -> list[range]:
        """The path to ``index`` as runs of consecutive indexes, root first: O(runs); none
        for no entry (``None``, as an empty session's leaf is)."""
        runs: list[range] = []
        breaks = self._breaks
        parents = self.parents
        if index is None:
            return runs
        while index != NO_ENTRY:
            start = breaks[bisect_right(breaks, index) - 1]
            runs.append(range(start, index + 1))
            index = parents[start]
        runs.reverse()
        return runs

    def children_of(self, entry_id: str) -> list[int]:
        """Entries whose ``parentId`` is ``entry_id``, in file order (one per id, as Pi)."""
        if self._children is None:
            children: dict[str, list[int]] = {}
            by_id = self.by_id if self.duplicated else None
            for index, parent in enumerate(self.parent_ids):
                if parent is not None and (by_id is None or by_id[self.ids[index]] == index):
                    children.setdefault(parent, []).append(index)
            self._children = children
        return self._children.get(entry_id, [])

    # ----------------------------------------------------------------------- decoding

    def message_sources(self, indexes: Sequence[int]) -> array[int]:
        """Those of ``indexes`` whose entries project to a context message (no decoding)."""
        bearing = map(MESSAGE_BEARING_TYPES.__contains__, map(self.types.__getitem__, indexes))
        return array("q", filterfalse(self.bare.__contains__, compress(indexes, bearing)))

    def entry(self, index: int) -> JsonObject:
        """The stored JSON object of entry ``index`` (cached; callers must not modify it)."""
        cached = self._decoded.get(index)
        if cached is not None:
            return cached
        line = self._appended.get(index)
        if line is not None:  # subscribers read every entry just appended: the short way
            value: JsonObject = codec.loads(line)
            if self._keep:
                self._decoded[index] = value
            return value
        if not self._keep:
            return self._decode([index])[index]
        self.load([index])
        return self._decoded[index]

    def entries(self, indexes: Sequence[int]) -> list[JsonObject]:
        """The stored JSON objects of several entries, reading the file as little as possible."""
        if not self._keep:
            return self.peek(indexes)
        decoded = self._decoded
        missing = [index for index in indexes if index not in decoded]
        if missing:
            self.load(missing)
        return [decoded[index] for index in indexes]

    def stored_lines(self, indexes: Sequence[int]) -> list[bytes | None]:
        """The stored bytes of each entry (no line break), ``None`` where there are none (the
        file's lines of an older format migrated in memory)."""
        found: dict[int, bytes] = {}
        if self._reader is not None and not self.migrated:
            starts = self._starts
            ends = self._ends
            on_disk = sorted((i for i in indexes if starts[i] >= 0), key=starts.__getitem__)
            views = self._reader.read_spans([(starts[i], ends[i]) for i in on_disk])
            found = {
                index: bytes(view).rstrip(b"\r") for index, view in zip(on_disk, views, strict=True)
            }
        appended = self._appended
        return [found[index] if index in found else appended.get(index) for index in indexes]

    def peek(self, indexes: Sequence[int]) -> list[JsonObject]:
        """The stored JSON objects of several entries, decoded without filling the cache.

        For reading through a long context once: memory stays bounded by ``indexes``.
        """
        decoded = self._decoded
        missing = [index for index in indexes if index not in decoded]
        fresh = self._decode(missing) if missing else {}
        return [decoded[index] if index in decoded else fresh[index] for index in indexes]

    def peek_to_restringify(self, indexes: Sequence[int]) -> list[JsonObject] | None:
        """The stored JSON objects of several entries as
        :func:`~ctxmodes.session.codec.loads_to_restringify` decodes their lines, only to be
        encoded again (read from the lines whether cached or not, and not kept); ``None``
        when some line holds what only the full decoder reads, when the stored lines are
        not the entries (an old file migrated in memory) or when the lines are not at hand
        (every entry was decoded as the file was read)."""
        appended = self._appended
        # Entries of the file alone (no appends): no look-up per entry.
        stored = {index for index in indexes if index not in appended} if appended else set(indexes)
        if self.migrated or (stored and self._reader is None):
            return None
        try:
            out = self._decode_stored(stored, to_restringify=True) if stored else {}
            if appended:
                out.update(
                    (index, _loads_to_restringify(appended[index]))
                    for index in indexes
                    if index in appended
                )
        except _NeedsFullDecoder:
            return None
        return list(map(out.__getitem__, indexes))

    def message_roles(self, indexes: Sequence[int]) -> list[Any]:
        """The ``role`` of the ``message`` of each of these entries that is a ``message``
        (``None`` where it has no message object or its message no role, and for entries of
        other types), read from the file without building the rest of each entry and without
        filling the cache. Each stretch of consecutive entries is read as one block of the
        file and decoded in one pass; no read holds more than :data:`_ROLE_BLOCK_BYTES`
        unless one line does."""
        roles: list[Any] = [None] * len(indexes)
        types = self.types
        wanted: list[int] = []  # positions read one by one
        for stretch in _stretches(indexes, _ROLE_BLOCK_MOST):
            for start, stop in self._within_bytes(indexes, *stretch):
                if stop - start >= _ROLE_BLOCK_LEAST:
                    found = self._run_roles(indexes[start], indexes[stop - 1])
                    if found is not None:
                        roles[start:stop] = found
                        continue
                wanted += (p for p in range(start, stop) if types[indexes[p]] == "message")
        decoded = self._decoded
        # Positions whose entry is decoded in full: cached, migrated, or with a role that
        # only the full decoder reads as ``JSON.parse`` does (a number, a lone surrogate).
        full: list[int] = []
        on_disk: list[int] = []
        readable = self._reader is not None and not self.migrated
        for position in wanted:
            index = indexes[position]
            if readable and index not in decoded and self._starts[index] >= 0:
                on_disk.append(position)
            else:
                full.append(position)
        starts, ends, ids = self._starts, self._ends, self.ids
        on_disk.sort(key=lambda position: starts[indexes[position]])
        for group in self._byte_groups(indexes, on_disk):
            assert self._reader is not None
            spans = [(starts[indexes[p]], ends[indexes[p]]) for p in group]
            for position, view in zip(group, self._reader.read_spans(spans), strict=True):
                try:
                    head = _decode_message_role(view)
                except (msgspec.MsgspecError, RecursionError):
                    full.append(position)
                    continue
                role = None if head.message is None else head.message.role
                if head.id != ids[indexes[position]] or not (role is None or type(role) is str):
                    full.append(position)
                else:
                    roles[position] = role
        full.sort(key=lambda position: starts[indexes[position]])
        for group in self._byte_groups(indexes, full):
            entries = self.peek([indexes[position] for position in group])
            for position, entry in zip(group, entries, strict=True):
                roles[position] = _role_of(entry)
        return roles

    def _byte_groups(self, indexes: Sequence[int], positions: list[int]) -> Iterator[list[int]]:
        """``positions`` (of ``indexes``, sorted by where their entries start) in groups whose
        lines, and what lies between them, span at most :data:`_ROLE_BLOCK_BYTES` of the file
        (each group at least one)."""
        starts, ends = self._starts, self._ends
        first = 0
        for number, position in enumerate(positions):
            index = indexes[position]
            if starts[index] < 0:  # appended since the file was read: nothing to read
                continue
            if (
                number > first
                and ends[index] - starts[indexes[positions[first]]] > _ROLE_BLOCK_BYTES
            ):
                yield positions[first:number]
                first = number
        if first < len(positions):
            yield positions[first:]

    def _within_bytes(
        self, indexes: Sequence[int], start: int, stop: int
    ) -> Iterator[tuple[int, int]]:
        """A stretch of consecutive entries, ``indexes[start:stop]``, in pieces whose lines
        span at most :data:`_ROLE_BLOCK_BYTES` of the file (each piece at least one entry)."""
        starts = self._starts
        while start < stop:
            first = indexes[start]
            if starts[indexes[stop - 1]] < 0:  # appended since the file was read
                yield start, stop
                return
            beyond = bisect_left(
                starts, starts[first] + _ROLE_BLOCK_BYTES, first + 1, first + stop - start
            )
            yield start, start + (beyond - first)
            start += beyond - first

    def _run_roles(self, first: int, last: int) -> list[Any] | None:
        """:meth:`message_roles` of entries ``first`` to ``last``, when they are consecutive
        lines of the file as indexed, as one read and a decoder pass; ``None`` when they are
        not, or when a line needs more than the role decoder."""
        starts = self._starts
        if self._reader is None or self.migrated or starts[first] < 0 or starts[last] < 0:
            return None
        block = bytes(self._reader.read_spans([(starts[first], self._ends[last])])[0])
        if block.count(b"\n") != last - first:
            return None  # lines the session skipped lie in between
        try:
            heads = _decode_message_role_lines(block)
        except (msgspec.MsgspecError, RecursionError):
            return None
        if list(map(_HEAD_ID, heads)) != self.ids[first : last + 1]:
            return None  # the file changed: reading entry by entry says where
        roles = [
            None if head.message is None or entry_type != "message" else head.message.role
            for head, entry_type in zip(heads, self.types[first : last + 1], strict=True)
        ]
        if not set(map(type, roles)) <= {str, type(None)}:
            return None
        return roles

    def run_starts(self) -> Sequence[int]:
        """The sorted indexes of the entries whose parent is not the entry just before them
        (0 always among them): every other entry continues the run of the one before it."""
        return self._breaks

    def stored_run(self, last: int, count: int) -> StoredRun | None:
        """The ``count`` entries that end at entry ``last`` along its parent chain, as a
        :class:`StoredRun`, when they are consecutive lines of the file as indexed (each the
        parent of the next) and all on disk; ``None`` otherwise."""
        first = last - count + 1
        if self.migrated or first < 0 or count <= 0:
            return None
        breaks = self._breaks
        # Entries appended since the file was opened (no stored line) all come last.
        if breaks[bisect_right(breaks, last) - 1] > first or self._starts[last] < 0:
            return None
        return StoredRun(self.types, self._starts, self._ends, first, last)

    def load(self, indexes: Iterable[int]) -> None:
        """Decode the given entries into the cache."""
        self._decoded.update(self._decode(indexes))

    def _decode(self, indexes: Iterable[int]) -> dict[int, JsonObject]:
        wanted = set(indexes)
        appended: dict[int, JsonObject] = {}
        if self._appended:
            lines = self._appended
            # Each line was encoded from an entry: it parses back to a JSON object.
            appended = {index: codec.loads(lines[index]) for index in wanted if index in lines}
            wanted.difference_update(appended)
        out = self._decode_stored(wanted) if wanted else {}
        out.update(appended)
        return out

    def _decode_stored(
        self, indexes: set[int], *, to_restringify: bool = False
    ) -> dict[int, JsonObject]:
        """Decode entries from their lines in the file (``to_restringify``: as
        :meth:`peek_to_restringify` decodes them, raising :class:`_NeedsFullDecoder` for a
        line that needs the full decoder)."""
        loads: Callable[[memoryview], Any] = codec.loads
        if to_restringify:
            loads = _loads_to_restringify
        if self._reader is None:
            raise SessionChangedError("entry data is not available")
        starts = self._starts
        ends = self._ends
        runs = _runs(sorted(indexes))
        views = self._reader.read_spans([(starts[first], ends[last]) for first, last in runs])
        out: dict[int, JsonObject] = {}
        for (first, last), view in zip(runs, views, strict=True):
            if last == first or not self._decode_run(first, last, view, out, to_restringify):
                base = starts[first]
                for index in range(first, last + 1):
                    line = view[starts[index] - base : ends[index] - base]
                    out[index] = self._decode_line(index, line, loads)
        if self._rename_hooks:
            for value in out.values():
                rename_hook_message(value)
        return out

    def _decode_run(
        self,
        first: int,
        last: int,
        view: memoryview,
        out: dict[int, JsonObject],
        to_restringify: bool,
    ) -> bool:
        """Decode the lines of entries ``first`` to ``last`` (all of the bytes in ``view``) in
        one parse; ``False`` (adding nothing) if they are not exactly those entries' lines."""
        loads = codec.loads_to_restringify if to_restringify else orjson.loads
        try:
            values = loads(b"[" + bytes(view).replace(b"\n", b",") + b"]")
            if self.ids[first : last + 1] != list(map(dict.get, values, repeat("id"))):
                return False  # skipped lines in between, or the file changed
        # A skipped line, or one only the full decoder reads (both errors are ValueErrors).
        except (ValueError, TypeError):
            return False
        out.update(zip(range(first, last + 1), values, strict=True))
        return True

    def _decode_line(
        self, index: int, line: memoryview, loads: Callable[[memoryview], Any] = codec.loads
    ) -> JsonObject:
        try:
            value = loads(line)
        except codec.JsonDecodeError:
            value = None
        if not isinstance(value, dict) or value.get("id") != self.ids[index]:
            raise SessionChangedError(
                f"entry {self.ids[index]} is no longer where it was in the session file; "
                "the file was rewritten since it was opened"
            )
        return value

    # ----------------------------------------------------------------------- appending

    def add(self, entry: JsonObject, line: bytes) -> int:
        """Index a new entry (its parent must already be indexed), written as ``line`` (with
        its line break); return its position. Reading it back decodes ``line``: what readers
        see is what the file holds, whatever the caller does with ``entry`` afterwards."""
        index = len(self.ids)
        entry_id: str = entry["id"]
        parent_id = entry.get("parentId")
        if not isinstance(parent_id, str):
            parent_id = None
        entry_type = entry.get("type")
        by_id = self.by_id  # built (once) before the entry is in the list of ids
        parent = by_id.get(parent_id, NO_ENTRY) if parent_id else NO_ENTRY
        self.ids.append(entry_id)
        self.parent_ids.add(index, parent_id)
        self.types.append(shared_type(entry_type))
        self.parents.append(parent)
        self._starts.append(-1)
        self._ends.add(index, -1, index, -1)
        # A copy without the line break: orjson leaves each encoding in an allocation of
        # about 4 KiB, which a session holding every line would keep.
        self._appended[index] = line[:-1]
        if is_bare_entry(entry_type, entry):
            self.bare.add(index)
        if parent != index - 1 or index == 0:
            self._breaks.append(index)
        if entry_id in by_id:
            self.duplicated = True
        by_id[entry_id] = index
        if self._children is not None and parent_id is not None:
            self._children.setdefault(parent_id, []).append(index)
        if entry_type == "label":
            self._apply_label(entry)
        elif entry_type == "session_info":
            self.last_session_info = index
        return index

    def _apply_label(self, entry: JsonObject) -> None:
        target = entry.get("targetId")
        if not isinstance(target, str):
            return
        label = entry.get("label")
        if js_truthy(label):
            self.labels[target] = (label, entry.get("timestamp"))
        else:
            self.labels.pop(target, None)

    # ----------------------------------------------------------------------- ancestry

    def nearest(
        self,
        index: int,
        kind: str,
        matches: str | Callable[[int], bool],
        path: Sequence[int] | None = None,
    ) -> int:
        """The closest entry at or above ``index`` that matches, or ``NO_ENTRY``.

        ``matches`` is an entry type or a predicate on entry indexes; ``path``, if given, is
        the root-to-``index`` path (it makes a first, long search cheaper). Answers are
        remembered per ``kind`` (an entry's ancestors never change), so asking again for
        the same entry or for a child of an entry already asked about is O(1).
        """
        memo = self._nearest.setdefault(kind, {})
        found = memo.get(index)
        if found is not None:
            return found
        hit = self._matcher(matches)
        parent = self.parents[index]
        if hit(index):
            found = index
        elif parent != NO_ENTRY and parent in memo:
            found = memo[parent]
        elif path is not None and path and path[-1] == index:
            found = self._search_path(path, matches)
        else:
            found = self._walk(index, memo, hit)
        memo[index] = found
        return found

    def _matcher(self, matches: str | Callable[[int], bool]) -> Callable[[int], bool]:
        if not isinstance(matches, str):
            return matches
        types = self.types
        return lambda index: types[index] == matches

    def _search_path(self, path: Sequence[int], matches: str | Callable[[int], bool]) -> int:
        if isinstance(matches, str):
            # C-level searches of the types along the path, a block at a time from its end
            # (the match is most often recent): each run of consecutive entries is a slice of
            # the list of types.
            for run in reversed(self.path_runs(path[-1])):
                found = find_last(self.types, matches, run.start, run.stop)
                if found != NO_ENTRY:
                    return found
            return NO_ENTRY
        for index in reversed(path):
            if matches(index):
                return index
        return NO_ENTRY

    def _walk(self, index: int, memo: dict[int, int], hit: Callable[[int], bool]) -> int:
        parents = self.parents
        walked: list[int] = []
        current = index
        found = NO_ENTRY
        while current != NO_ENTRY:
            known = memo.get(current)
            if known is not None:
                found = known
                break
            if hit(current):
                found = current
                break
            walked.append(current)
            current = parents[current]
        for visited in walked[::_MEMO_STRIDE]:
            memo[visited] = found
        return found

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()


def _runs(indexes: list[int]) -> list[list[int]]:
    """The first and last of each run of entries close to each other in the file (ascending
    ``indexes``), read and parsed as one JSON array: one call for a run of lines instead of one
    each (entries in between come along)."""
    if indexes and indexes[-1] - indexes[0] == len(indexes) - 1:
        # Consecutive entries, as most of a context is: runs of the longest length, at once.
        last = indexes[-1]
        return [[first, min(first + _RUN_LENGTH - 1, last)] for first in indexes[::_RUN_LENGTH]]
    runs: list[list[int]] = []
    for index in indexes:
        if runs and index - runs[-1][1] <= _RUN_GAP and index - runs[-1][0] < _RUN_LENGTH:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return runs


class StoredRun:
    """Consecutive entries ``first`` .. ``last`` of the file, known from the index alone."""

    __slots__ = ("_ends", "_first", "_last", "_starts", "_types")

    def __init__(
        self,
        types: list[str | None],
        starts: Sequence[int],
        ends: LineEnds,
        first: int,
        last: int,
    ) -> None:
        self._types, self._starts, self._ends = types, starts, ends
        self._first, self._last = first, last

    def __len__(self) -> int:
        return self._last - self._first + 1

    def first_within(self, budget: int) -> int:
        """The first offset from which the run's lines, to its end, span at most ``budget``
        bytes of the file (``len(self)`` when not even the last one fits)."""
        lowest = self._ends[self._last] - budget
        return bisect_left(self._starts, lowest, self._first, self._last + 1) - self._first

    def types(self, start: int = 0) -> list[Any]:
        """The ``type`` of each entry from offset ``start`` (``None`` for a non-string)."""
        return self._types[self._first + start : self._last + 1]


class ActivePath:
    """The root-to-leaf path of the current leaf, maintained incrementally."""

    def __init__(self, table: EntryTable, leaf: int | None) -> None:
        self._table = table
        self.indexes: array[int] = array("q") if leaf is None else table.path_array(leaf)
        self._positions: dict[int, int] | None = None

    @property
    def leaf(self) -> int | None:
        return self.indexes[-1] if self.indexes else None

    def position(self, index: int) -> int | None:
        """Where ``index`` sits on the path, or ``None`` if it is not on it."""
        if self._positions is not None:
            return self._positions.get(index)
        # Until a move needs the map, search the path from the leaf end, where lookups land.
        found = find_last(self.indexes, index)
        return None if found == NO_ENTRY else found

    def _position_map(self) -> dict[int, int]:
        if self._positions is None:
            self._positions = {entry: position for position, entry in enumerate(self.indexes)}
        return self._positions

    def push(self, index: int) -> None:
        """Extend the path by a new child of the current leaf."""
        if self._positions is not None:
            self._positions[index] = len(self.indexes)
        self.indexes.append(index)

    def move_to(self, leaf: int | None) -> None:
        """Re-root the path at ``leaf``, reusing the part shared with the current path."""
        if leaf is None:
            self.indexes = array("q")
            self._positions = None
            return
        parents = self._table.parents
        positions = self._position_map()
        climbed: list[int] = []
        current = leaf
        keep = 0
        while current != NO_ENTRY:
            position = positions.get(current)
            if position is not None:
                keep = position + 1
                break
            climbed.append(current)
            current = parents[current]
        for dropped in self.indexes[keep:]:
            del positions[dropped]
        del self.indexes[keep:]
        for index in reversed(climbed):
            self.push(index)
