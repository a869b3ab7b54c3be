"""The persisted forms of notes: one custom entry per write or append, and the snapshot Tree
appends after a branch cut.

Both are model-invisible ``custom`` entries, shared byte for byte with the TypeScript
extension::

    codex-context-note           {"protocol": 1, "action": "append"|"write", "path", "text",
                                  "timestamp": <ms>}
    codex-context-note-snapshot  {"protocol": 1, "timestamp": <ms>,
                                  "files": [{"path", "text", "createdAt", "updatedAt"}]}
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, ValidationError

from ctxmodes.errors import CtxmodesError
from ctxmodes.session import codec
from ctxmodes.windows._wire import WireModel

NOTE_CUSTOM_TYPE = "codex-context-note"
NOTE_SNAPSHOT_CUSTOM_TYPE = "codex-context-note-snapshot"
NOTE_PROTOCOL: Final = 1

#: The largest note, in UTF-8 bytes, after a write or append.
MAX_NOTE_BYTES = 1_000_000
#: The largest snapshot, in UTF-8 bytes of its JSON.
MAX_SNAPSHOT_BYTES = 10_000_000

# Timestamps are epoch milliseconds. The bounds are the years 1 and 9999: a timestamp
# outside them cannot be shown as an ISO date, so an entry carrying one is treated as
# invalid data (skipped on replay) rather than crashing every later read.
_MIN_TIMESTAMP_MS = -62_135_596_800_000
_MAX_TIMESTAMP_MS = 253_402_300_799_999
TimestampMs = Annotated[int | float, Field(ge=_MIN_TIMESTAMP_MS, le=_MAX_TIMESTAMP_MS)]

NoteAction = Literal["append", "write"]


class NoteSizeError(CtxmodesError):
    """A note or a note snapshot would exceed its size limit."""


class NoteEntryData(WireModel):
    """``data`` of a ``codex-context-note`` entry: one write (replace) or append."""

    protocol: Literal[1]
    action: NoteAction
    path: str
    text: str
    timestamp: TimestampMs


class SnapshotFile(WireModel):
    """One note inside a snapshot."""

    path: str
    text: str = Field(max_length=MAX_NOTE_BYTES)
    created_at: TimestampMs = Field(alias="createdAt")
    updated_at: TimestampMs = Field(alias="updatedAt")


class NoteSnapshotData(WireModel):
    """``data`` of a ``codex-context-note-snapshot`` entry: the whole note state at a cut."""

    protocol: Literal[1]
    timestamp: TimestampMs
    files: list[SnapshotFile]


def parse_note_entry(data: object) -> NoteEntryData | None:
    """The note operation in ``data``, or ``None`` when it is not a valid one."""
    try:
        return NoteEntryData.model_validate(data)
    except ValidationError:
        return None


def parse_note_snapshot(data: object) -> NoteSnapshotData | None:
    """The snapshot in ``data``, or ``None`` when it is not a valid one.

    A file whose text exceeds the note limit invalidates the whole snapshot.
    """
    try:
        snapshot = NoteSnapshotData.model_validate(data)
    except ValidationError:
        return None
    # max_length above counts characters, a cheap first filter; the limit is in bytes.
    if any(utf8_length(file.text) > MAX_NOTE_BYTES for file in snapshot.files):
        return None
    return snapshot


def utf8_length(text: str) -> int:
    """The UTF-8 size of ``text``; a lone surrogate counts as JavaScript's ``Buffer`` would
    count its replacement character (3 bytes)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "replace")) + 2 * _surrogate_count(text)


def _surrogate_count(text: str) -> int:
    # "replace" turns each lone surrogate into "?" (1 byte); Buffer.byteLength writes
    # U+FFFD (3 bytes). Well-formed text has none, so this loop almost never runs.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return sum(1 for char in text if 0xD800 <= ord(char) <= 0xDFFF)
    return 0


def check_snapshot_size(snapshot: NoteSnapshotData) -> None:
    """:raises NoteSizeError: the snapshot's JSON exceeds :data:`MAX_SNAPSHOT_BYTES`."""
    if len(codec.dumps(snapshot.dump())) > MAX_SNAPSHOT_BYTES:
        raise NoteSizeError("Context note snapshot exceeds the 10,000,000-byte limit")
