"""Reading a session file into a line index, decoding as little as possible.

Pi reads a session by splitting the file on ``\\n`` and ``JSON.parse``-ing every line, silently
skipping blank and malformed ones; the first parsed value must be the ``session`` header. This
reader accepts exactly the same lines, in one sequential pass:

* Most lines are only *validated*: msgspec checks the whole line is JSON but builds Python
  objects for nothing except ``type``, ``id`` and ``parentId``. It is at least as strict as
  ``JSON.parse`` (it rejects the ``NaN`` and ``Infinity`` literals too), so every line it
  accepts is one Pi accepts.
* Lines from a little before the last compaction to the end of the file, but never more than
  the last few MiB, are *decoded* in full and kept: that is where the newest part of the
  context lives, and it is read right away. Everything else is decoded on demand, so the
  memory a long session needs at start-up is bounded by its index, not its size.
* For ``message`` and ``branch_summary`` lines the scan also records whether they project
  to a message (:attr:`ScanResult.bare`), so a context's length is known without decoding it.
* Lines the validator or the fast decoder rejects (including lines nested too deeply for
  them) go through the full ``JSON.parse``-compatible decoder, so the result is always the one
  decoding everything would give. Validation runs under a lowered recursion limit, so that it
  also rejects every line nested deeper than the codec's limit (see
  :func:`_validate_within_nesting_limit`); lines decoded in full have their brackets
  counted. Other entries are decoded later, on demand, from the recorded byte offsets.
* A large file is read in parts side by side, one per core, by forked copies of the process
  when it has a single thread (:func:`_scan_in_parts`): each indexes its part as this pass
  would, and the parts' indexes are joined into the one a single pass gives.

Differences from Pi, all of them on files Pi itself never writes:

* every skipped line is reported as a :class:`SkippedLine` with its 1-based line number,
  except a last line without a newline while the file is growing: another writer is still
  writing it, so it is left out as ``in_progress`` rather than reported as skipped;
* a line holding JSON that is not an object, an entry without a string ``id`` and a second
  ``session`` header are skipped and reported (Pi keeps the first two as entries that break
  its own tree walk, and ignores the third);
* lines nested deeper than :data:`~ctxmodes.session.codec.MAX_NESTING` levels are skipped and
  reported (Pi reads them): below that limit every entry also encodes into the reports and
  traces built from it.

Version 1 files (no entry ids) are decoded in full and migrated in memory, see
:mod:`ctxmodes.session.migrate`.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import accumulate, compress, islice, pairwise, repeat
from operator import attrgetter, is_, is_not, itemgetter, ne
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO, Final, Literal, TypeVar

import msgspec
import orjson

from ctxmodes.forked_work import processes_allowed, run_forked_beside
from ctxmodes.session import codec
from ctxmodes.session.entry_types import ENTRY_TYPES
from ctxmodes.session.errors import NotASessionError, SessionError
from ctxmodes.session.index_arrays import consecutive
from ctxmodes.session.jsvalues import js_truthy
from ctxmodes.session.migrate import (
    migrate_v1_entries,
    needs_migration,
    rename_hook_message,
    version_number,
)
from ctxmodes.session.regular_file import NotARegularFileError, open_regular

__all__ = [
    "MESSAGE_BEARING_TYPES",
    "LineEnds",
    "ParentIds",
    "ScanResult",
    "SkippedLine",
    "is_bare_entry",
    "read_session_file",
    "scan_file",
    "scan_lines",
    "shared_type",
]

# Reads of 128 KiB: larger ones only hold more lines in memory at once, for no speed.
_CHUNK_SIZE: Final = 128 << 10
_DECODED_FIELDS: Final = itemgetter("type", "id", "parentId")
_EXCERPT_CHARS: Final = 80

BLANK: Final = "blank line"
MALFORMED: Final = "not valid JSON"
NOT_OBJECT: Final = "not a JSON object"
NO_ID: Final = "entry has no string id"
EXTRA_HEADER: Final = "second session header"
TOO_DEEP: Final = f"nested deeper than {codec.MAX_NESTING} levels"


_EntryType = Literal[ENTRY_TYPES]  # type: ignore[valid-type]
_V = TypeVar("_V")
#: A header, the version it states and whether its hook messages are to be renamed.
_HeaderState = tuple[dict[str, Any], float, bool]


class _Present(msgspec.Struct, gc=False):
    """Any JSON object, validated and skipped: the scan only needs to know it is one."""


class _Head(msgspec.Struct, gc=False):
    """The part of a line the scan needs; msgspec skips the rest after validating it."""

    # Untracked by the garbage collector (a few percent faster): it holds only decoded JSON,
    # which cannot refer back to it. The types are those of an ordinary entry, checked in C:
    # a line with a string ``id``, a ``type`` Pi writes (decoded as the one shared string of
    # that name) and a string or null ``parentId``. Any other line (no id, a type of
    # another kind, a ``message`` that is neither an object nor null) fails validation and
    # is left to the general path, which reads every line as Pi does.
    id: str
    type: _EntryType | None = None
    parentId: str | None = None
    message: _Present | None = None


_validate_head: Final = msgspec.json.Decoder(_Head).decode
_HEAD_FIELDS: Final = attrgetter("type", "id", "parentId")
_HEAD_TYPE: Final = attrgetter("type")
_HEAD_ID: Final = attrgetter("id")
_HEAD_PARENT: Final = attrgetter("parentId")
_HEAD_MESSAGE: Final = attrgetter("message")
_is_none: Final = partial(is_, None)
# One shared string per entry type Pi writes: a decoder makes a new one per line (~56 bytes
# each, 56 MB for a million entries), and equality with a shared string is an identity test.
_SHARED_TYPES: Final = {name: name for name in ENTRY_TYPES}


def shared_type(value: Any) -> str | None:
    """The type as the index keeps it: a string (shared when Pi writes that type), or
    ``None`` for a type that is not a string, which equals no entry type in Pi either and
    may be unhashable (a list)."""
    return _SHARED_TYPES.get(value, value) if type(value) is str else None


# msgspec gives up on deep nesting with RecursionError rather than DecodeError; such a line is
# left to the full decoder like any other line it rejects.
_VALIDATION_FAILURES: Final = (msgspec.DecodeError, RecursionError)


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line of the file that is not part of the session, and why."""

    line_number: int
    reason: str
    #: The start of the line, as read (:attr:`excerpt` is it as text).
    head: bytes

    @property
    def excerpt(self) -> str:
        """The start of the line as text, at most 80 characters."""
        return _excerpt(self.head)

    def __str__(self) -> str:
        return f"line {self.line_number}: {self.reason}"


class LineEnds:
    """Where each entry's line ends (the offset of its line break), from where the next
    entry's starts: kept only where that is not the byte before (the last entry of each run
    of lines indexed together, an entry followed by a skipped line, an entry not in the
    file), which spares the scan a pass and an index 8 bytes an entry."""

    __slots__ = ("_kept", "_starts")

    def __init__(self, starts: array[int], kept: dict[int, int] | None = None) -> None:
        self._starts = starts
        self._kept: dict[int, int] = {} if kept is None else kept

    @property
    def kept(self) -> dict[int, int]:
        """The ends kept, by entry index."""
        return self._kept

    def __getitem__(self, index: int) -> int:
        kept = self._kept.get(index)
        return self._starts[index + 1] - 1 if kept is None else kept

    def add(self, first: int, start: int, last: int, end: int) -> None:
        """Entries ``first`` to ``last``, consecutive lines of the file, span ``start`` to
        ``end`` (-1 and -1: they are not in the file)."""
        if self._kept.get(first - 1) == start - 1:
            del self._kept[first - 1]  # now implied by this start
        self._kept[last] = end


class ParentIds:
    """The ``parentId`` of each entry (``None`` for none), kept only where it is not the id
    of the entry before (the first entry, roots, side branches): a list of them would cost a
    pointer an entry."""

    __slots__ = ("_ids", "_kept")

    def __init__(self, ids: list[str], kept: dict[int, str | None] | None = None) -> None:
        self._ids = ids
        self._kept: dict[int, str | None] = {} if kept is None else kept

    @property
    def kept(self) -> dict[int, str | None]:
        """The parent ids kept, by entry index."""
        return self._kept

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, index: int) -> str | None:
        kept = self._kept
        return kept[index] if index in kept else self._ids[index - 1]

    def __iter__(self) -> Iterator[str | None]:
        ids = self._ids
        parents: list[str | None] = [None, *ids[:-1]] if ids else []
        for index, parent in self._kept.items():
            parents[index] = parent
        return iter(parents)

    def keep(self, index: int, parent: str | None) -> None:
        """Entry ``index``'s parent is ``parent``, whatever the entry before it."""
        self._kept[index] = parent

    def add(self, index: int, parent: str | None) -> None:
        """Entry ``index``'s parent is ``parent`` (the entries before it already listed)."""
        if not index or parent != self._ids[index - 1]:
            self._kept[index] = parent


class ScanResult:
    """Everything learned from one pass over a session file.

    Entry ``i`` (file order, header and skipped lines excluded) has id ``ids[i]``, parent id
    ``parents[i]`` (``None`` for a root or a missing/non-string ``parentId``), type
    ``types[i]`` (``None`` when the stored ``type`` is missing or not a string) and occupies bytes
    ``starts[i]:ends[i]`` of the file. ``decoded`` holds the entries that had to be decoded
    during the scan, by index.

    A plain class, not a dataclass: generating a dataclass's methods for these twenty fields
    cost every command that reads a session about a millisecond of start-up.
    """

    __slots__ = (
        "bare",
        "decoded",
        "duplicated",
        "ends",
        "ends_with_newline",
        "header",
        "ids",
        "in_progress",
        "label_indexes",
        "last_session_info",
        "not_a_session",
        "original_version",
        "parent_indexes",
        "parents",
        "rename_hook_messages",
        "size",
        "skipped",
        "starts",
        "types",
        "unresolved",
    )

    def __init__(self) -> None:
        self.header: dict[str, Any] | None = None
        self.original_version: float = 3.0
        self.rename_hook_messages = False
        self.ids: list[str] = []
        self.parents = ParentIds(self.ids)
        self.types: list[str | None] = []
        #: Whether some id is used by more than one entry (found when the scan finishes).
        self.duplicated = False
        #: Index of each entry's parent, -1 for none (made when the scan finishes: the entry
        #: before each, except the ``unresolved``, resolved by id).
        self.parent_indexes: array[int] = array("q")
        #: Entries whose parent is not the entry before them, resolved by id at the end.
        self.unresolved: list[int] = []
        self.label_indexes: list[int] = []
        self.last_session_info = -1
        # Machine integers (8 bytes an entry each), not lists of int objects (~36 bytes).
        self.starts: array[int] = array("q")
        self.ends = LineEnds(self.starts)
        self.decoded: dict[int, dict[str, Any]] = {}
        #: ``message`` entries without a message object and ``branch_summary`` entries with
        #: an empty summary: entries of a message-bearing type that project to no message.
        self.bare: set[int] = set()
        self.skipped: list[SkippedLine] = []
        self.size = 0
        self.ends_with_newline = True
        #: True when some line could be parsed but the first parsed value is not a header.
        self.not_a_session = False
        #: Bytes of a last line without a newline that were left out because the file grew
        #: while it was read: a writer was still writing that line (neither an entry nor
        #: skipped).
        self.in_progress = 0


def _parse_each(
    parse: Callable[[bytes], Any], lines: list[bytes], rejected: dict[int, str]
) -> list[Any]:
    """``parse`` applied to each line, ``None`` for a line it rejects (orjson's reason in
    ``rejected``, by position)."""
    try:
        return list(map(parse, lines))
    except (orjson.JSONDecodeError, *_VALIDATION_FAILURES):
        pass
    # Some line needs the slow path; parse the lines again one by one.
    heads: list[Any] = []
    remember = heads.append
    for position, line in enumerate(lines):
        try:
            remember(parse(line))
        except orjson.JSONDecodeError as exc:
            remember(None)
            rejected[position] = exc.msg
        except _VALIDATION_FAILURES:
            remember(None)
    return heads


_LEVELS: Final = codec.MAX_NESTING - 1
# Lines nested one level deeper than the limit, in every place an ordinary line can nest:
# arrays and objects under a member the validator skips, and inside the message object.
_TOO_DEEP_PROBES: Final = (
    b'{"id":"x","a":%s0%s}' % (b"[" * (_LEVELS + 1), b"]" * (_LEVELS + 1)),
    b'{"id":"x","a":%s0%s}' % (b'{"a":' * (_LEVELS + 1), b"}" * (_LEVELS + 1)),
    b'{"id":"x","message":{"a":%s0%s}}' % (b"[" * _LEVELS, b"]" * _LEVELS),
)
# The lowered limit leaves this much less room than the nesting limit, for the interpreter's
# own levels below the frames counted: a line this much shallower may fail validation too,
# and is then judged exactly by the general path.
_RECURSION_MARGIN: Final = 20


def _validate_within_nesting_limit(lines: list[bytes], proven: set[int]) -> list[Any] | None:
    """:data:`_validate_head` over ``lines`` (``None`` for a rejected line), such that a line
    nested deeper than :data:`~ctxmodes.session.codec.MAX_NESTING` is rejected as well, or
    ``None`` when that cannot be had.

    msgspec counts every level it descends against the interpreter's recursion limit
    (CPython 3.11); lowered to a little more than the current depth plus the nesting limit
    for the length of this call, it makes validation the nesting guard, for free, instead of
    one more pass over every byte (a fifth of an open). Three probe lines one level too deep
    must fail first, so a guard that does not hold (another interpreter, another msgspec)
    falls back to counting; ``proven`` holds the stack depths at which they already failed
    (probing every read would cost 1-2 % of an open). Only while no other thread runs: the
    limit is the process's.
    """
    if threading.active_count() != 1:
        return None
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(depth + codec.MAX_NESTING - _RECURSION_MARGIN)
    except RecursionError:  # already deeper than that
        return None
    try:
        if depth not in proven:
            for probe in _TOO_DEEP_PROBES:
                try:
                    list(map(_validate_head, [probe]))
                except RecursionError:
                    continue
                return None
            proven.add(depth)
        return _parse_each(_validate_head, lines, {})
    finally:
        sys.setrecursionlimit(limit)


def _head(line: bytes) -> bytes:
    # Enough bytes for the excerpt's characters, however wide they are in UTF-8.
    return line[: _EXCERPT_CHARS * 4]


#: Entry types that project to a context message (Pi's ``sessionEntryToContextMessages``).
MESSAGE_BEARING_TYPES: Final = frozenset(
    {"message", "custom_message", "branch_summary", "compaction"}
)


def is_bare_entry(entry_type: Any, entry: Any) -> bool:
    """Whether an entry of a message-bearing type projects to no message after all: a
    ``message`` whose ``message`` is not an object, a ``branch_summary`` whose summary is
    falsy in JavaScript."""
    if entry_type == "message":
        return not isinstance(entry.get("message"), dict)
    if entry_type == "branch_summary":
        return not js_truthy(entry.get("summary"))
    return False


def _excerpt(line: bytes | bytearray) -> str:
    text = bytes(line[: _EXCERPT_CHARS * 4]).decode("utf-8", errors="replace").rstrip("\r")
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


class _Scanner:
    """Consumes the lines of one file in order (see :func:`scan_lines`), or of a part of it
    that starts ``after_header`` (see :func:`_scan_in_parts`)."""

    def __init__(self, after_header: bool = False) -> None:
        self.result = ScanResult()
        self._line_number = 0
        self._seen_header = after_header
        self._legacy: list[tuple[int, int, int, Any, bytes]] | None = None
        # Stack depths at which validation is known to reject lines nested too deeply.
        self._guard_proven: set[int] = set()
        #: Whether some id occurs twice, when already known (see _scan_in_parts).
        self.duplicated: bool | None = None

    def feed(
        self, lines: list[bytes], offset: int, decode: bool = False, deep: list[int] | None = None
    ) -> int:
        """Index complete ``lines`` starting at file ``offset``; return the next offset.

        With ``decode`` the lines are decoded in full (and kept) instead of only validated.
        ``deep`` lists the positions of the lines nested too deeply, when already known.
        """
        if self.result.not_a_session:
            return offset
        if not self._seen_header or self._legacy is not None:
            return self._feed_slow(lines, offset, decode)
        # What orjson said about the lines it rejected (when decoding), so that they are
        # not parsed a second time to find out.
        rejected: dict[int, str] = {}
        heads = None if decode else _validate_within_nesting_limit(lines, self._guard_proven)
        if heads is None:
            heads = _parse_each(orjson.loads if decode else _validate_head, lines, rejected)
            for position in _deep_lines(lines) if deep is None else deep:
                heads[position] = None  # the general path reports it
                rejected.pop(position, None)
        end = self._add_regular(lines, heads, offset, decode)
        if end >= 0:
            self._line_number += len(lines)
            return end
        return self._feed_each(lines, heads, offset, decode, rejected)

    @property
    def line_count(self) -> int:
        """Lines consumed so far."""
        return self._line_number

    def header_state(self) -> _HeaderState | None:
        """The header found and what it says about the file, when it is an ordinary one
        (not a file to migrate from version 1, not one that is not a session)."""
        result = self.result
        if result.header is None or self._legacy is not None or result.not_a_session:
            return None
        return result.header, result.original_version, result.rename_hook_messages

    def append_part(
        self, part: ScanResult, line_count: int, header_state: _HeaderState | None = None
    ) -> bool:
        """Take the index of the next part of the file, read by a scanner of its own: the
        first part whole, with its ``header_state`` (``False``, having taken nothing, when
        it has none), a later one with its indexes and line numbers moved past those before.
        """
        result = self.result
        if not self._seen_header:
            if header_state is None:
                return False
            self.result = part
            part.header, part.original_version, part.rename_hook_messages = header_state
            self._seen_header = True
            self._line_number = line_count
            return True
        base = len(result.ids)
        lines = self._line_number
        result.ids += part.ids
        result.types += part.types
        result.starts += part.starts
        result.parents.kept.update(_moved(part.parents.kept, base))
        result.ends.kept.update(_moved(part.ends.kept, base))
        # The part's first entry was read as if nothing came before it: its parent, even
        # none, is looked up like that of any entry not the child of the one before.
        first = [] if part.unresolved[:1] == [0] or not part.ids else [base]
        result.unresolved += first + [index + base for index in part.unresolved]
        result.label_indexes += [index + base for index in part.label_indexes]
        if part.last_session_info >= 0:
            result.last_session_info = part.last_session_info + base
        result.decoded.update(_moved(part.decoded, base))
        result.bare.update(index + base for index in part.bare)
        result.skipped += [
            SkippedLine(skipped.line_number + lines, skipped.reason, skipped.head)
            for skipped in part.skipped
        ]
        self._line_number += line_count
        return True

    def _add_regular(self, lines: list[bytes], heads: list[Any], offset: int, decoded: bool) -> int:
        """Index a run of ordinary entry lines in bulk and return the offset after them.

        Returns -1 (having changed nothing) if any line needs the general path.
        """
        if None in heads or not heads:
            return -1
        types: list[Any]
        ids: list[Any]
        parents: list[Any]
        if decoded:
            try:
                types, ids, parents = map(list, zip(*map(_DECODED_FIELDS, heads), strict=True))
                types = list(map(_SHARED_TYPES.get, types, types))  # TypeError: unhashable
            except (KeyError, TypeError):
                return -1
            if not set(map(type, types)) <= {str, type(None)}:
                types = list(map(shared_type, types))
            if set(map(type, ids)) != {str}:
                return -1
            if not set(map(type, parents)) <= {str, type(None)}:
                parents = [parent if type(parent) is str else None for parent in parents]
        else:
            # Validation checked every type already.
            types = list(map(_HEAD_TYPE, heads))
            ids = list(map(_HEAD_ID, heads))
            parents = list(map(_HEAD_PARENT, heads))
        count = len(ids)
        # Most runs hold messages alone: one count (an identity test per entry, the types
        # being shared strings) spares looking for each of the other types.
        only_messages = types.count("message") == count
        if not only_messages and "session" in types:
            return -1
        result = self.result
        base = len(result.ids)
        # Each line's length, then its line break's: running sums give every line's start
        # and end in turn, in one pass and without a call per line.
        steps = [1] * (2 * count)
        steps[::2] = map(len, lines)
        bounds = list(accumulate(steps, initial=offset))
        end = bounds.pop()
        # Arrays built from lists and appended whole: a third of extending them item by item.
        result.starts += array("q", bounds[::2])
        result.ends.add(base, offset, base + count - 1, bounds[-1])
        result.types.extend(types)
        # Pi appends each entry as a child of the one before it: assume that, and leave the
        # few entries whose parent is not the previous line to be resolved by id at the end.
        previous_ids = [result.ids[base - 1] if base else None, *ids[:-1]]
        result.ids.extend(ids)
        # Most runs are one chain: one comparison of the lists, stopping at the first break.
        differs = [] if parents == previous_ids else list(map(ne, parents, previous_ids))
        all_parents = result.parents
        if not base:
            all_parents.keep(0, parents[0])
        position = -1
        while differs:
            try:
                position = differs.index(True, position + 1)
            except ValueError:
                break
            result.unresolved.append(base + position)
            all_parents.keep(base + position, parents[position])
        if "" in parents:
            # An empty parent id is no parent, even when the previous entry's id is empty.
            result.unresolved.extend(
                base + position for position, parent in enumerate(parents) if parent == ""
            )
        if decoded:
            result.decoded.update(zip(range(base, base + count), heads, strict=True))
        if only_messages or "message" in types:
            self._note_bare_messages(base, types, heads, decoded)
        if only_messages:
            return end
        if "branch_summary" in types:
            for position, entry_type in enumerate(types):
                if entry_type == "branch_summary":
                    full = heads[position] if decoded else codec.loads(lines[position])
                    if is_bare_entry(entry_type, full):
                        result.bare.add(base + position)
        if "label" in types or "session_info" in types:
            for position, entry_type in enumerate(types):
                if entry_type == "label" or entry_type == "session_info":
                    full = heads[position] if decoded else None
                    full = self._note_metadata(base + position, entry_type, lines[position], full)
                    if full is not None:
                        result.decoded[base + position] = full
        return end

    def _note_bare_messages(
        self, base: int, types: list[Any], heads: list[Any], decoded: bool
    ) -> None:
        """Record the ``message`` entries of a run whose ``message`` is not an object."""
        count = len(heads)
        if decoded:
            kinds = map(type, map(dict.get, heads, repeat("message")))
            lacking = compress(range(count), map(is_not, kinds, repeat(dict)))
        else:
            # Validation left each message a _Present, which is true, or None: the common
            # case, every one present, is one pass in C.
            if all(map(_HEAD_MESSAGE, heads)):
                return
            lacking = compress(range(count), map(_is_none, map(_HEAD_MESSAGE, heads)))
        # Most entries without a message are of other types; only messages count here.
        self.result.bare.update(base + p for p in lacking if types[p] == "message")

    def _feed_each(
        self,
        lines: list[bytes],
        heads: list[Any],
        offset: int,
        decoded: bool,
        rejected: dict[int, str],
    ) -> int:
        """The general path: one line at a time, with every check (``rejected``: what orjson
        said about the lines at those positions)."""
        result = self.result
        first_line = self._line_number + 1
        for position, (line, head) in enumerate(zip(lines, heads, strict=True)):
            line_number = first_line + position
            end = offset + len(line)
            full: Any = head if decoded else None
            if decoded and not isinstance(head, dict):
                head = None
            if head is not None and not decoded:
                has_message = _HEAD_MESSAGE(head) is not None
                head = dict(zip(("type", "id", "parentId"), _HEAD_FIELDS(head), strict=True))
                # Stands for the message object the validator skipped.
                head["message"] = {} if has_message else None
            if head is None:
                head = full = self._decode_or_skip(line, line_number, rejected.get(position))
                if head is None:
                    offset = end + 1
                    continue
            entry_type = head.get("type")
            entry_id = head.get("id")
            if entry_type == "session":
                self._skip(line, line_number, EXTRA_HEADER)
            elif type(entry_id) is not str:
                self._skip(line, line_number, NO_ID)
            else:
                index = len(result.ids)
                parent = head.get("parentId")
                self._add_parent(index, parent if type(parent) is str else None)
                if entry_type == "label" or entry_type == "session_info":
                    full = self._note_metadata(index, entry_type, line, full)
                elif entry_type == "branch_summary" and full is None:
                    head = codec.loads(line)
                if is_bare_entry(entry_type, head):
                    result.bare.add(index)
                if full is not None:
                    result.decoded[index] = full
                result.ids.append(entry_id)
                result.types.append(shared_type(entry_type))
                result.starts.append(offset)
                result.ends.add(index, offset, index, end)
            offset = end + 1
        self._line_number += len(lines)
        return offset

    def _add_parent(self, index: int, parent: str | None) -> None:
        result = self.result
        result.parents.add(index, parent)
        if not parent or not index or parent != result.ids[index - 1]:
            result.unresolved.append(index)

    def _note_metadata(self, index: int, entry_type: str, line: bytes, full: Any) -> Any:
        result = self.result
        if entry_type == "session_info":
            result.last_session_info = index
            return full
        result.label_indexes.append(index)
        return codec.loads(line) if full is None else full

    def _feed_slow(self, lines: list[bytes], offset: int, decode: bool) -> int:
        """Lines up to the header, and every line of a version 1 file, are decoded in full."""
        for position, line in enumerate(lines):
            if self._seen_header and self._legacy is None:
                return self.feed(lines[position:], offset, decode)
            self._line_number += 1
            end = offset + len(line)
            value = self._decode_or_skip(line, self._line_number)
            if value is not None:
                if not self._seen_header:
                    self._take_header(value)
                    if self.result.not_a_session:
                        return end + 1
                else:
                    assert self._legacy is not None
                    self._legacy.append((self._line_number, offset, end, value, line))
            offset = end + 1
        return offset

    def _take_header(self, value: Any) -> None:
        result = self.result
        self._seen_header = True
        if not (isinstance(value, dict) and value.get("type") == "session"):
            result.not_a_session = True
            return
        if not isinstance(value.get("id"), str):
            result.not_a_session = True
            return
        result.header = value
        result.original_version = version_number(value)
        v1_step, v2_step = needs_migration(result.original_version)
        result.rename_hook_messages = v2_step
        if v1_step:
            self._legacy = []
        if v2_step:
            value["version"] = 3

    def _decode_or_skip(self, line: bytes, line_number: int, rejected: str | None = None) -> Any:
        """Full ``JSON.parse`` of a line; ``None`` (and a report) if Pi would drop it.

        ``rejected`` is what orjson said when it already failed to parse the line."""
        if not line.strip():
            self._skip(line, line_number, BLANK)
            return None
        if codec.nested_too_deeply(line):
            self._skip(line, line_number, TOO_DEEP)
            return None
        try:
            value = codec.loads(line) if rejected is None else codec.loads_rejected(line, rejected)
        except codec.JsonDecodeError:
            self._skip(line, line_number, MALFORMED)
            return None
        if not js_truthy(value):
            self._skip(line, line_number, NOT_OBJECT)
            return None
        if self._seen_header and self._legacy is None and not isinstance(value, dict):
            self._skip(line, line_number, NOT_OBJECT)
            return None
        return value

    def _skip(self, line: bytes, line_number: int, reason: str) -> None:
        self.result.skipped.append(SkippedLine(line_number, reason, _head(line)))

    def finish(self) -> ScanResult:
        result = self.result
        if self._legacy is not None and result.header is not None:
            self._finish_legacy(result.header, self._legacy)
        if result.rename_hook_messages:
            for entry in result.decoded.values():
                rename_hook_message(entry)
        if result.ids:
            # Each entry's parent taken to be the entry before it (see _add_regular).
            result.parent_indexes = consecutive(0, len(result.ids))
            result.parent_indexes.pop()
            result.parent_indexes.insert(0, -1)
        resolve_parents(result, self.duplicated)
        if result.header is None and not result.not_a_session and result.size > 0:
            # Pi: a non-empty file without any parsable line is not a session.
            result.not_a_session = True
        return result

    def _finish_legacy(
        self, header: dict[str, Any], lines: list[tuple[int, int, int, Any, bytes]]
    ) -> None:
        result = self.result
        migrate_v1_entries(header, [value for _, _, _, value, _ in lines])
        header["version"] = 3
        for line_number, start, end, value, line in lines:
            if not isinstance(value, dict):
                result.skipped.append(SkippedLine(line_number, NOT_OBJECT, _head(line)))
                continue
            if value.get("type") == "session":
                result.skipped.append(SkippedLine(line_number, EXTRA_HEADER, _head(line)))
                continue
            parent = value.get("parentId")
            index = len(result.ids)
            entry_type = value.get("type")
            if entry_type == "label" or entry_type == "session_info":
                self._note_metadata(index, entry_type, line, value)
            if is_bare_entry(entry_type, value):
                result.bare.add(index)
            result.decoded[index] = value
            self._add_parent(index, parent if type(parent) is str else None)
            result.ids.append(value["id"])
            result.types.append(shared_type(entry_type))
            result.starts.append(start)
            result.ends.add(index, start, index, end)
        result.skipped.sort(key=lambda skipped: skipped.line_number)


def last_indexes(ids: list[str], wanted: set[str]) -> dict[str, int]:
    """The index of the last entry of each of the ``wanted`` ids found in ``ids``, in one
    C-level pass: a map of every id would cost ~100 bytes an entry to answer a few."""
    return {ids[index]: index for index in compress(range(len(ids)), map(wanted.__contains__, ids))}


def has_duplicates(ids: list[str]) -> bool:
    """Whether some id occurs twice, with no map of every id kept: a set of the first half
    of the ids, checked against the second half, then one of the second half (each set
    dropped at once; at their peak, half the memory of a set of them all)."""
    half = len(ids) // 2
    first = set(islice(ids, half))
    if len(first) != half or any(map(first.__contains__, islice(ids, half, None))):
        return True
    del first
    return len(set(islice(ids, half, None))) != len(ids) - half


# How far before an entry its parent is first looked for: a side branch mostly starts a few
# entries back.
_NEARBY: Final = 256


def _found_nearby(ids: list[str], parent_ids: ParentIds, indexes: list[int]) -> dict[str, int]:
    """The entry of each parent id of the entries at ``indexes`` that lies shortly before
    its child, ids being unique: a few short C-level searches instead of a pass over every
    id. The searches stop when they have compared as many ids as there are entries; what is
    not found is left to that pass."""
    found: dict[str, int] = {}
    budget = len(ids)
    for index in indexes:
        parent = parent_ids[index]
        if not parent or parent in found:
            continue
        start = max(0, index - _NEARBY)
        budget -= index - start
        if budget < 0:
            break
        try:
            found[parent] = ids.index(parent, start, index)
        except ValueError:
            continue
    return found


def resolve_parents(result: ScanResult, duplicated: bool | None = None) -> None:
    """Find duplicated ids (unless already known), and the parent index of each entry whose
    parent is not the entry before it (``result.unresolved``): the last entry of that id, as
    Pi's map of ids has it."""
    ids = result.ids
    result.duplicated = has_duplicates(ids) if duplicated is None else duplicated
    parent_ids = result.parents
    found = {} if result.duplicated else _found_nearby(ids, parent_ids, result.unresolved)
    wanted = {
        parent
        for index in result.unresolved
        if (parent := parent_ids[index]) and parent not in found
    }
    if wanted:
        found.update(last_indexes(ids, wanted))
    lookup = found.get
    for index in result.unresolved:
        parent = parent_ids[index]
        result.parent_indexes[index] = lookup(parent, -1) if parent else -1


# Every byte but the two that open a level (deleting the rest leaves a line's openers).
_NOT_OPENING: Final = bytes(range(256)).translate(None, b"[{")
# A line nested deeper than the limit holds more openers than that, and as many closers.
_SHORTEST_DEEP_LINE: Final = 2 * (codec.MAX_NESTING + 1)


def _deep_lines(lines: list[bytes]) -> list[int]:
    """Positions of the lines nested too deeply. A line too short to nest that deep is
    cleared by its length, a longer one by counting its openers in one pass; only a line
    with more openers than the limit has its depth worked out."""
    long = list(compress(range(len(lines)), map(_SHORTEST_DEEP_LINE.__le__, map(len, lines))))
    if not long:
        return []
    openers = map(
        len, map(bytes.translate, map(lines.__getitem__, long), repeat(None), repeat(_NOT_OPENING))
    )
    suspects = compress(long, map(codec.MAX_NESTING.__lt__, openers))
    return [position for position in suspects if codec.nested_too_deeply(lines[position])]


_MANY_OPENERS: Final = re.compile(rb"[^\n]{%d,}" % (codec.MAX_NESTING + 1))
_OPENERS_AND_BREAKS: Final = bytes(range(256)).translate(None, b"[{\n")


def deep_lines_in_chunk(chunk: bytes, lines: list[bytes]) -> list[int]:
    """:func:`_deep_lines` for ``lines = chunk.split(b"\n")``, in one pass over the chunk
    instead of one call per line: deleting all but openers and line breaks leaves each line's
    openers on a line of their own, and only a line of more openers than the limit has its
    depth worked out. The first and last lines, which may continue in the chunks around it,
    are left out (they are checked where they end)."""
    openers = chunk.translate(None, _OPENERS_AND_BREAKS)
    last = len(lines) - 1
    suspects = (openers.count(b"\n", 0, run.start()) for run in _MANY_OPENERS.finditer(openers))
    return [
        position
        for position in suspects
        if 0 < position < last and codec.nested_too_deeply(lines[position])
    ]


def scan_lines(data: bytes) -> ScanResult:
    """Index session file content held in memory, decoding every entry."""
    scanner = _Scanner()
    scanner.result.size = len(data)
    lines = data.split(b"\n")
    tail = lines.pop()
    offset = scanner.feed(lines, 0, decode=True)
    if tail:
        scanner.result.ends_with_newline = False
        scanner.feed([tail], offset, decode=True)
    return scanner.finish()


def read_session_file(path: Path, *, preload: bool = True) -> ScanResult:
    """:func:`scan_file` for an existing file, with failures as one-line session errors.

    :raises NotASessionError: if the file is not empty and does not start with a header.
    :raises SessionError: if the file cannot be read or is not a regular file.
    """
    try:
        scan = scan_file(path, preload=preload)
    except NotARegularFileError as exc:
        raise SessionError(f"not a session file (it is {exc.kind}): {path}") from None
    except IsADirectoryError:
        raise SessionError(f"not a session file (it is a directory): {path}") from None
    except OSError as exc:
        raise SessionError(f"cannot read session file {path}: {exc.strerror}") from None
    if scan.not_a_session:
        raise NotASessionError(f"Session file is not a valid pi session: {path}")
    return scan


def scan_file(path: str | os.PathLike[str], *, preload: bool = True) -> ScanResult:
    """Index a session file in one sequential pass (128 KiB reads), or in parts read side by
    side by forked copies of this process when the file is large, more than one core is
    there and no other thread runs (see :func:`_scan_in_parts`).

    With ``preload``, lines from shortly before the last compaction to the end of the file,
    which is where the context of the latest leaf lives, are decoded in full on the way, at
    most the last :data:`RECENT_BYTES` of the file; the rest (without ``preload``, every
    line) is decoded on demand.

    :raises NotARegularFileError: if ``path`` is a directory, FIFO, socket or device.
    """
    with open_regular(path, buffering=0) as stream:
        decode_from = _recent_region(stream) if preload else _BEYOND_ANY_FILE
        fd = stream.fileno()
        scanned = _scan_in_parts(fd, decode_from)
        if scanned is None:
            scanner = _Scanner()
            scanned = scanner, *_scan_range(scanner, fd, 0, None, decode_from)
        scanner, offset, size, tail = scanned
        growing = bool(tail) and os.fstat(fd).st_size > size
    scanner.result.size = size
    if growing:
        # Another writer is in the middle of this line; the next read will see it whole.
        scanner.result.in_progress = len(tail)
    elif tail:
        scanner.result.ends_with_newline = False
        scanner.feed([tail], offset)
    return scanner.finish()


def _scan_range(
    scanner: _Scanner, fd: int, start: int, stop: int | None, decode_from: int
) -> tuple[int, int, bytes]:
    """Feed ``scanner`` the lines of the file from ``start`` (where a line starts) to
    ``stop`` (``None``: the end of the file), read with ``pread``, which leaves the file's
    position to whoever else reads it.

    Returns the offset after the last complete line, where reading stopped, and the bytes
    of a last line without a line break.
    """
    position = start
    offset = start
    # A line longer than a chunk arrives in parts; they are joined once, when it ends.
    parts: list[bytes] = []
    while chunk := os.pread(
        fd, _CHUNK_SIZE if stop is None else min(_CHUNK_SIZE, stop - position), position
    ):
        position += len(chunk)
        if b"\n" not in chunk:
            # The middle of a long line: joining only when it ends keeps this linear.
            parts.append(chunk)
            continue
        lines = chunk.split(b"\n")
        # Only lines decoded in full need their nesting counted: validating the others
        # is their guard (see _validate_within_nesting_limit).
        deep = deep_lines_in_chunk(chunk, lines) if position > decode_from else []
        del chunk
        if parts:
            parts.append(lines[0])
            lines[0] = b"".join(parts)
            parts.clear()
        parts.append(lines.pop())
        if position > decode_from:
            # The first line may have begun in earlier chunks: it is checked whole, here.
            deep[:0] = _deep_lines(lines[:1])
        if offset >= decode_from:
            offset = scanner.feed(lines, offset, decode=True, deep=deep)
        elif position - len(parts[0]) <= decode_from:
            offset = scanner.feed(lines, offset)
        else:
            starts = list(accumulate(map((1).__add__, map(len, lines)), initial=offset))
            split = bisect_left(starts, decode_from, hi=len(lines))
            after = [line - split for line in deep if line >= split]
            offset = scanner.feed(lines[:split], offset)
            offset = scanner.feed(lines[split:], offset, decode=True, deep=after)
    return offset, position, b"".join(parts)


#: The least a part of a file read by a process of its own spans: below that, forking and
#: handing the index back cost about what reading a part beside the others saves.
PART_LEAST: Final = 4 << 20
# What decoding a byte in full costs, in bytes validated (measured: 3.5-4.5).
_DECODED_WEIGHT: Final = 4
# A part read by a forked process, against the one read here: the child also forks and hands
# its index back, which costs it about a tenth of its part.
_FORKED_SHARE: Final = 0.9


def _part_count(size: int) -> int:
    """How many parts to read a file of ``size`` bytes in: one per process allowed
    (:func:`~ctxmodes.forked_work.processes_allowed`), each at least :data:`PART_LEAST`."""
    if size < 2 * PART_LEAST:
        return 1
    return max(1, min(size // PART_LEAST, processes_allowed()))


def _scan_in_parts(fd: int, decode_from: int) -> tuple[_Scanner, int, int, bytes] | None:
    """:func:`_scan_range` over the whole file, its first parts indexed by forked copies of
    this process while this one indexes the last; ``None`` when the file is not worth
    splitting, or the parts could not be had and the file is to be read here alone.

    Each part starts where a line starts, and is cut to cost about as much as the others.
    The children's indexes come back as :func:`_part_answer` writes them and are appended to
    the first one's, and the last part, read here, after them. A first part that does not
    find an ordinary header (a file that is not a session, or a version 1 file to migrate)
    is read again alone, in order, as is a file whose parts could not all be had.
    """
    size = os.fstat(fd).st_size
    validated = min(size, decode_from)
    count = _part_count(validated)
    if count < 2:
        return None
    # The same work in each part, a byte decoded in full weighing as much as several merely
    # validated, and a forked part a little less, for the handing back.
    work = validated + (size - validated) * _DECODED_WEIGHT
    share = int(work / (count - 1 + 1 / _FORKED_SHARE))
    starts = _line_starts_near(fd, [share * part for part in range(1, count)])
    if starts is None:
        return None
    bounds = list(pairwise([0, *starts]))

    def read_part(start: int, stop: int) -> bytes:
        scanner = _Scanner(after_header=start > 0)
        offset, _, tail = _scan_range(scanner, fd, start, stop, decode_from)
        if tail or offset != stop:
            raise ValueError("the part did not end where a line ends")
        return _part_answer(scanner)

    def read_last() -> tuple[_Scanner, set[str], int, int, bytes]:
        scanner = _Scanner(after_header=True)
        offset, position, tail = _scan_range(scanner, fd, starts[-1], None, decode_from)
        # Looking for duplicated ids starts here, beside the other parts.
        return scanner, set(scanner.result.ids), offset, position, tail

    answers, (last, seen, offset, position, tail) = run_forked_beside(
        [partial(read_part, start, stop) for start, stop in bounds], read_last
    )
    if answers is None:
        return None
    scanner = _Scanner()
    duplicated = len(seen) != len(last.result.ids)
    while answers:  # each answer let go of once read
        part, line_count, header_state, duplicated_within = _load_part(answers.pop(0))
        if not scanner.append_part(part, line_count, header_state):
            return None
        if not duplicated:
            duplicated = duplicated_within or not seen.isdisjoint(part.ids)
            if answers:
                seen.update(part.ids)
    del seen
    scanner.append_part(last.result, last.line_count)
    scanner.duplicated = duplicated
    return scanner, offset, position, tail


def _moved(by_index: dict[int, _V], base: int) -> Iterator[tuple[int, _V]]:
    return ((index + base, value) for index, value in by_index.items())


def _line_starts_near(fd: int, offsets: list[int]) -> list[int] | None:
    """The start of the first line that starts at or after each offset (``None`` when two
    parts would meet, or a line runs on for a whole part)."""
    starts: list[int] = []
    for offset in offsets:
        found = -1
        position = max(0, offset - 1)
        while found < 0:
            block = os.pread(fd, _CHUNK_SIZE, position)
            if not block:
                return None
            found = block.find(b"\n")
            if found < 0:
                position += len(block)
                if position - offset > PART_LEAST:
                    return None
        start = position + found + 1
        if starts and start <= starts[-1]:
            return None
        starts.append(start)
    return starts


class _PartIndex(msgspec.Struct, array_like=True):
    """A part's index and state as a forked reader hands them back (as msgpack: a third of
    the cost of pickling them, and no pickle module to import). An entry decoded on the way
    that msgpack cannot carry (a lone surrogate, an integer beyond 64 bits) fails the part,
    which is then read in order."""

    ids: list[str]
    duplicated_within: bool
    line_count: int
    header_state: tuple[dict[str, Any], float, bool] | None
    #: The type most entries have, and the others' by index: handed back one by one, the
    #: types would arrive as copies of the shared strings, each to be looked up again.
    usual_type: str | None
    other_types: dict[int, str | None]
    starts: bytes
    parents_kept: dict[int, str | None]
    ends_kept: dict[int, int]
    unresolved: list[int]
    label_indexes: list[int]
    last_session_info: int
    decoded: dict[int, Any]
    bare: list[int]
    skipped: list[tuple[int, str, bytes]]


_encode_part: Final = msgspec.msgpack.Encoder().encode
_decode_part: Final = msgspec.msgpack.Decoder(_PartIndex).decode


def _usual_type(types: list[str | None]) -> str | None:
    """The type most of ``types`` are, which a part's answer names once for all: in a session
    most entries are messages, which one count over the part shows (a count per type took
    a twentieth of a part's reading)."""
    if types.count("message") * 2 >= len(types):
        return "message"
    return max(_SHARED_TYPES, key=types.count)


def _part_answer(scanner: _Scanner) -> bytes:
    """What a forked reader of a part hands back."""
    result = scanner.result
    types = result.types
    usual_type = _usual_type(types)
    others = compress(range(len(types)), map(is_not, types, repeat(usual_type)))
    return _encode_part(
        _PartIndex(
            ids=result.ids,
            duplicated_within=len(set(result.ids)) != len(result.ids),
            line_count=scanner.line_count,
            header_state=scanner.header_state(),
            usual_type=usual_type,
            other_types={index: types[index] for index in others},
            starts=result.starts.tobytes(),
            parents_kept=result.parents.kept,
            ends_kept=result.ends.kept,
            unresolved=result.unresolved,
            label_indexes=result.label_indexes,
            last_session_info=result.last_session_info,
            decoded=result.decoded,
            bare=list(result.bare),
            skipped=[(line.line_number, line.reason, line.head) for line in result.skipped],
        )
    )


def _load_part(answer: bytearray) -> tuple[ScanResult, int, _HeaderState | None, bool]:
    """The index, line count and header state a forked reader of a part handed back, and
    whether an id occurs twice in that part."""
    part = _decode_part(answer)
    result = ScanResult()
    result.ids = part.ids
    result.parents = ParentIds(part.ids, part.parents_kept)
    result.types = [shared_type(part.usual_type)] * len(part.ids)
    for index, entry_type in part.other_types.items():
        result.types[index] = shared_type(entry_type)
    result.starts = array("q")
    result.starts.frombytes(part.starts)
    result.ends = LineEnds(result.starts, part.ends_kept)
    result.unresolved = part.unresolved
    result.label_indexes = part.label_indexes
    result.last_session_info = part.last_session_info
    result.decoded = part.decoded
    result.bare = set(part.bare)
    result.skipped = [SkippedLine(*skipped) for skipped in part.skipped]
    return result, part.line_count, part.header_state, part.duplicated_within


#: An offset no file reaches: without preloading, no line is decoded during the scan.
_BEYOND_ANY_FILE: Final = 1 << 62
_COMPACTION_LINE: Final = b'\n{"type":"compaction",'
# Kept entries usually start a little before their compaction (Pi keeps ~20k tokens).
_KEPT_MARGIN: Final = 512 * 1024
#: The most of a file's end decoded during the scan (about 30 MB of decoded objects): the
#: newest context entries are wanted at once, older ones are decoded only when asked for.
RECENT_BYTES: Final = 4 << 20


def _recent_region(stream: BinaryIO) -> int:
    """Offset from which to decode in full: a margin before the last compaction line, but
    no more than :data:`RECENT_BYTES` before the end."""
    end = stream.seek(0, os.SEEK_END)
    # A compaction before this would not move the start of the region.
    floor = max(0, end - RECENT_BYTES + _KEPT_MARGIN)
    position = end
    carry = b""
    found = -1
    while position > floor and found < 0:
        start = max(floor, position - _CHUNK_SIZE)
        stream.seek(start)
        block = stream.read(position - start) + carry
        index = block.rfind(_COMPACTION_LINE)
        if index >= 0:
            found = start + index
        carry = block[: len(_COMPACTION_LINE)]
        position = start
    stream.seek(0)
    return max(0, found - _KEPT_MARGIN, end - RECENT_BYTES)
