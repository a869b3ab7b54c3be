"""Reading a session file into a line index, decoding as little as possible.

Pi reads a session by splitting the file on ``\\n`` and ``JSON.parse``-ing every line, silently
skipping blank and malformed ones; the first parsed value must be the ``session`` header. This
reader accepts exactly the same lines but, instead of decoding each one, validates it and pulls
out only ``type``, ``id`` and ``parentId`` (pydantic-core parses the line without building
Python objects for the rest). Full entries are decoded later, on demand, from the recorded
byte offsets. Lines that the fast validator rejects go through the full decoder, so the
result is the same as decoding everything.

Differences from Pi, all of them on files Pi itself never writes:

* every skipped line is reported as a :class:`SkippedLine` with its 1-based line number;
* a line holding JSON that is not an object, an entry without a string ``id`` and a second
  ``session`` header are skipped and reported (Pi keeps the first two as entries that break
  its own tree walk, and ignores the third);
* lines nested deeper than the standard library parser allows are reported as malformed.

Version 1 files (no entry ids) are decoded in full and migrated in memory, see
:mod:`ctxmodes.session.migrate`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from itertools import accumulate
from operator import add, itemgetter
from typing import Annotated, Any, Final

from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from ctxmodes.session import codec
from ctxmodes.session.jsvalues import js_truthy
from ctxmodes.session.migrate import (
    migrate_v1_entries,
    needs_migration,
    rename_hook_message,
    version_number,
)

__all__ = ["ScanResult", "SkippedLine", "scan_file", "scan_lines"]

_CHUNK_SIZE: Final = 1 << 20
_EXCERPT_CHARS: Final = 80

BLANK: Final = "blank line"
MALFORMED: Final = "not valid JSON"
NOT_OBJECT: Final = "not a JSON object"
NO_ID: Final = "entry has no string id"
EXTRA_HEADER: Final = "second session header"


class _Head(TypedDict):
    # Defaults make every result carry all three keys, so they can be read in bulk.
    type: Annotated[Any, Field(default=None)]
    id: Annotated[Any, Field(default=None)]
    parentId: Annotated[Any, Field(default=None)]


# pydantic-core validates the whole line as JSON but materialises only these three fields.
_validate_head = TypeAdapter(_Head).validator.validate_json
_HEAD_FIELDS: Final = itemgetter("type", "id", "parentId")


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line of the file that is not part of the session, and why."""

    line_number: int
    reason: str
    excerpt: str

    def __str__(self) -> str:
        return f"line {self.line_number}: {self.reason}"


@dataclass(slots=True)
class ScanResult:
    """Everything learned from one pass over a session file.

    Entry ``i`` (file order, header and skipped lines excluded) has id ``ids[i]``, parent id
    ``parents[i]`` (``None`` for a root or a missing/non-string ``parentId``), type
    ``types[i]`` (the raw value; not necessarily a string) and occupies bytes
    ``starts[i]:ends[i]`` of the file. ``decoded`` holds the entries that had to be decoded
    during the scan, by index.
    """

    header: dict[str, Any] | None = None
    original_version: float = 3.0
    rename_hook_messages: bool = False
    ids: list[str] = field(default_factory=list)
    parents: list[str | None] = field(default_factory=list)
    types: list[Any] = field(default_factory=list)
    #: id -> index of the last entry with that id.
    by_id: dict[str, int] = field(default_factory=dict)
    #: Index of each entry's parent as far as it was known when the entry was read (-1:
    #: none found yet; links to later entries are resolved by the store).
    parent_indexes: list[int] = field(default_factory=list)
    label_indexes: list[int] = field(default_factory=list)
    last_session_info: int = -1
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    decoded: dict[int, dict[str, Any]] = field(default_factory=dict)
    skipped: list[SkippedLine] = field(default_factory=list)
    size: int = 0
    ends_with_newline: bool = True
    #: True when some line could be parsed but the first parsed value is not a header.
    not_a_session: bool = False


def _excerpt(line: bytes | bytearray) -> str:
    text = bytes(line[: _EXCERPT_CHARS * 4]).decode("utf-8", errors="replace").rstrip("\r")
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


class _Scanner:
    """Consumes the lines of one file in order (see :func:`scan_lines`)."""

    def __init__(self) -> None:
        self.result = ScanResult()
        self._line_number = 0
        self._seen_header = False
        self._legacy: list[tuple[int, int, int, Any, bytes]] | None = None

    def feed(self, lines: list[bytes], offset: int, suspicious: bool) -> int:
        """Index complete ``lines`` starting at file ``offset``; return the next offset."""
        if self.result.not_a_session:
            return offset
        if not self._seen_header or self._legacy is not None:
            return self._feed_slow(lines, offset)
        validate = _validate_head
        heads: list[Any] = []
        remember = heads.append
        for line in lines:
            try:
                remember(validate(line))
            except ValidationError:
                remember(None)
        if not suspicious and self._add_regular(lines, heads, offset):
            self._line_number += len(lines)
            return offset + sum(map(len, lines)) + len(lines)
        return self._feed_each(lines, heads, offset, suspicious)

    def _add_regular(self, lines: list[bytes], heads: list[Any], offset: int) -> bool:
        """Index a run of ordinary entry lines in bulk; ``False`` (nothing done) otherwise."""
        if None in heads or not heads:
            return False
        types, ids, parents = zip(*map(_HEAD_FIELDS, heads), strict=True)
        if "session" in types or set(map(type, ids)) != {str}:
            return False
        if not set(map(type, parents)) <= {str, type(None)}:
            parents = tuple(parent if type(parent) is str else None for parent in parents)
        result = self.result
        base = len(result.ids)
        lengths = list(map(len, lines))
        starts = list(accumulate(map((1).__add__, lengths), initial=offset))
        starts.pop()
        result.starts.extend(starts)
        result.ends.extend(map(add, starts, lengths))
        result.ids.extend(ids)
        result.types.extend(types)
        result.parents.extend(parents)
        by_id = result.by_id
        count = len(ids)
        by_id.update(zip(ids, range(base, base + count), strict=True))
        # Pi appends each entry as a child of the one before; test that case in bulk.
        previous_ids = [result.ids[base - 1] if base else None, *ids[:-1]]
        if list(parents) == previous_ids and "" not in parents:
            result.parent_indexes.extend(range(base - 1, base + count - 1))
        else:
            lookup = by_id.get
            result.parent_indexes.extend(
                [
                    index - 1
                    if parent and parent == previous
                    else lookup(parent, -1)
                    if parent
                    else -1
                    for index, parent, previous in zip(
                        range(base, base + count), parents, previous_ids, strict=True
                    )
                ]
            )
        if "label" in types or "session_info" in types:
            for position, entry_type in enumerate(types):
                if entry_type == "label" or entry_type == "session_info":
                    full = self._note_metadata(base + position, entry_type, lines[position], None)
                    if full is not None:
                        result.decoded[base + position] = full
        return True

    def _feed_each(
        self, lines: list[bytes], heads: list[Any], offset: int, suspicious: bool
    ) -> int:
        """The general path: one line at a time, with every check."""
        result = self.result
        by_id = result.by_id
        first_line = self._line_number + 1
        for position, (line, head) in enumerate(zip(lines, heads, strict=True)):
            line_number = first_line + position
            end = offset + len(line)
            full: Any = None
            if head is not None and suspicious and _has_literals(line):
                head = None
            if head is None:
                head = full = self._decode_or_skip(line, line_number)
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
                parent = parent if type(parent) is str else None
                result.parents.append(parent)
                result.parent_indexes.append(by_id.get(parent, -1) if parent else -1)
                if entry_type == "label" or entry_type == "session_info":
                    full = self._note_metadata(index, entry_type, line, full)
                if full is not None:
                    result.decoded[index] = full
                by_id[entry_id] = index
                result.ids.append(entry_id)
                result.types.append(entry_type)
                result.starts.append(offset)
                result.ends.append(end)
            offset = end + 1
        self._line_number += len(lines)
        return offset

    def _note_metadata(self, index: int, entry_type: str, line: bytes, full: Any) -> Any:
        result = self.result
        if entry_type == "session_info":
            result.last_session_info = index
            return full
        result.label_indexes.append(index)
        return codec.loads(line) if full is None else full

    def _feed_slow(self, lines: list[bytes], offset: int) -> int:
        """Lines up to the header, and every line of a version 1 file, are decoded in full."""
        for position, line in enumerate(lines):
            if self._seen_header and self._legacy is None:
                return self.feed(lines[position:], offset, suspicious=True)
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

    def _decode_or_skip(self, line: bytes, line_number: int) -> Any:
        """Full ``JSON.parse`` of a line; ``None`` (and a report) if Pi would drop it."""
        if not line.strip():
            self._skip(line, line_number, BLANK)
            return None
        try:
            value = codec.loads(line)
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
        self.result.skipped.append(SkippedLine(line_number, reason, _excerpt(line)))

    def finish(self) -> ScanResult:
        result = self.result
        if self._legacy is not None and result.header is not None:
            self._finish_legacy(result.header, self._legacy)
        if result.rename_hook_messages:
            for entry in result.decoded.values():
                rename_hook_message(entry)
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
                result.skipped.append(SkippedLine(line_number, NOT_OBJECT, _excerpt(line)))
                continue
            if value.get("type") == "session":
                result.skipped.append(SkippedLine(line_number, EXTRA_HEADER, _excerpt(line)))
                continue
            parent = value.get("parentId")
            index = len(result.ids)
            entry_type = value.get("type")
            if entry_type == "label" or entry_type == "session_info":
                self._note_metadata(index, entry_type, line, value)
            result.decoded[index] = value
            result.ids.append(value["id"])
            result.parents.append(parent if type(parent) is str else None)
            result.parent_indexes.append(result.by_id.get(parent, -1) if parent else -1)
            result.by_id[value["id"]] = index
            result.types.append(entry_type)
            result.starts.append(start)
            result.ends.append(end)
        result.skipped.sort(key=lambda skipped: skipped.line_number)


def scan_lines(data: bytes) -> ScanResult:
    """Index session file content held in memory."""
    scanner = _Scanner()
    scanner.result.size = len(data)
    lines = data.split(b"\n")
    tail = lines.pop()
    suspicious = _has_literals(data)
    offset = scanner.feed(lines, 0, suspicious)
    if tail:
        scanner.result.ends_with_newline = False
        scanner.feed([tail], offset, suspicious)
    return scanner.finish()


def scan_file(path: str | os.PathLike[str]) -> ScanResult:
    """Index a session file in one sequential pass (1 MiB reads)."""
    scanner = _Scanner()
    size = 0
    offset = 0
    # A line longer than a chunk arrives in parts; they are joined once, when it ends.
    parts: list[bytes] = []
    with open(path, "rb", buffering=0) as stream:
        while chunk := stream.read(_CHUNK_SIZE):
            size += len(chunk)
            lines = chunk.split(b"\n")
            suspicious = _has_literals(chunk)
            if parts:
                parts.append(lines[0])
                lines[0] = b"".join(parts)
                parts.clear()
                suspicious = suspicious or _has_literals(lines[0])
            parts.append(lines.pop())
            del chunk
            offset = scanner.feed(lines, offset, suspicious)
    scanner.result.size = size
    tail = b"".join(parts)
    if tail:
        scanner.result.ends_with_newline = False
        scanner.feed([tail], offset, suspicious=True)
    return scanner.finish()


# re's literal search is about twice as fast as ``bytes in`` on large buffers.
_NAN: Final = re.compile(b"NaN").search
_INFINITY: Final = re.compile(b"Infinity").search


def _has_literals(data: bytes) -> bool:
    # JSON.parse rejects the NaN / Infinity literals that the fast validator accepts; lines
    # of a chunk that contains either word are checked one by one.
    return _NAN(data) is not None or _INFINITY(data) is not None
