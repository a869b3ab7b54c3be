"""The notes store: the logical note files of the active branch, and the five note
operations the model can call.

The state is a replay of the branch's note entries: a snapshot replaces everything, a write
replaces one file, an append extends it (created on first use). :class:`NotesStore` applies
entries one at a time as they are appended, so no operation rescans the session, and
:meth:`NotesStore.from_branch` rebuilds it after the leaf moves, starting from the latest
snapshot. Writes are two-step: :meth:`NotesStore.prepare_write` validates and returns the
entry to persist; the entry reaches the store when it is observed (or committed).

Results are the plain JSON objects the model reads (``{"source": "pi-session", ...}``).
Orders by name compare code points (the extension's ``localeCompare`` has no portable
equivalent); timestamps are shown as ISO-8601 UTC with milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import ClassVar, Literal, TypedDict

from ctxmodes.session.jsvalues import js_locale_sort_key, js_sort_key
from ctxmodes.session.models import CustomEntry, SessionEntry, UnknownEntry
from ctxmodes.windows.note_entries import (
    MAX_NOTE_BYTES,
    NOTE_CUSTOM_TYPE,
    NOTE_PROTOCOL,
    NOTE_SNAPSHOT_CUSTOM_TYPE,
    NoteAction,
    NoteEntryData,
    NoteSizeError,
    NoteSnapshotData,
    SnapshotFile,
    check_snapshot_size,
    parse_note_entry,
    parse_note_snapshot,
    utf8_length,
)
from ctxmodes.windows.note_paths import NotePathError, normalize_note_path, normalize_note_prefix
from ctxmodes.windows.stored import StoredEntry, stored_form

SOURCE = "pi-session"
DEFAULT_MAX_RESULTS = 20
MAX_LIST_RESULTS = 100
MAX_SEARCH_FILES = 100
MAX_MATCHES_PER_FILE = 100

FileOrderBy = Literal["name", "created_at", "updated_at"]
FileOrder = Literal["ascending", "descending"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_from_ms(timestamp_ms: float) -> str:
    """``new Date(ms).toISOString()``: UTC, millisecond precision, ``Z`` suffix."""
    seconds, milliseconds = divmod(int(timestamp_ms), 1000)
    return f"{_iso_second(seconds)}.{milliseconds:03d}Z"


@lru_cache(maxsize=1024)
def _iso_second(seconds: int) -> str:
    # Notes' times repeat (a note's creation, the writes of one second): each second is
    # formatted once.
    return (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


@dataclass(frozen=True, slots=True)
class NoteFile:
    """One logical note file."""

    path: str
    text: str
    created_at: float
    updated_at: float
    byte_count: int

    def line_count(self) -> int:
        """Lines as the thread hint counts them: an empty note has none."""
        return self.text.count("\n") + 1 if self.text else 0


class NoteMetadata(TypedDict):
    path: str
    bytes: int
    created_at: str
    updated_at: str


class NoteContent(NoteMetadata):
    content: str
    start_line: int
    stop_line: int
    total_lines: int


class LineMatch(TypedDict):
    line_number: int
    line: str


class FileMatches(TypedDict):
    path: str
    matches: list[LineMatch]


class NotesListResult(TypedDict):
    source: str
    files: list[NoteMetadata]


class NotesReadResult(TypedDict):
    source: str
    file: NoteContent | None


class NotesSearchResult(TypedDict):
    source: str
    files: list[FileMatches]


class NotesWriteResult(TypedDict):
    source: str
    file: NoteMetadata


def metadata(note: NoteFile) -> NoteMetadata:
    return {
        "path": note.path,
        "bytes": note.byte_count,
        "created_at": iso_from_ms(note.created_at),
        "updated_at": iso_from_ms(note.updated_at),
    }


@dataclass(frozen=True, slots=True)
class PreparedNoteWrite:
    """A validated write or append: persist ``data`` as a ``codex-context-note`` entry, then
    return ``result`` to the model."""

    data: NoteEntryData
    result: NotesWriteResult

    custom_type: ClassVar[str] = NOTE_CUSTOM_TYPE


def matching_lines(text: str, query: str, limit: int) -> list[LineMatch]:
    """The first ``limit`` lines of ``text`` (split at ``\\n``) holding ``query``, numbered
    from 1: the occurrences are found by ``str.find`` and only their lines are cut out, so a
    long note costs a scan, not a test per line."""
    matches: list[LineMatch] = []
    if "\n" in query:
        return matches  # no line holds a line break
    number, counted = 1, 0
    found = text.find(query)
    while found >= 0 and len(matches) < limit:
        start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        if end < 0:
            end = len(text)
        number += text.count("\n", counted, start)
        counted = start
        matches.append({"line_number": number, "line": text[start:end]})
        found = text.find(query, end + 1)
    return matches


def matching_texts(
    texts: Sequence[str], query: str, match_limit: int, text_limit: int
) -> list[tuple[int, list[LineMatch]]]:
    """The first ``text_limit`` of ``texts``, taken in order, holding ``query``: each as its
    index and its first ``match_limit`` matching lines (see :func:`matching_lines`)."""
    found: list[tuple[int, list[LineMatch]]] = []
    for index, text in enumerate(texts):
        matches = matching_lines(text, query, match_limit)
        if matches:
            found.append((index, matches))
            if len(found) >= text_limit:
                break
    return found


#: How a :class:`NotesStore` goes through its notes' texts for a search: called as
#: :func:`matching_texts` is, and answering as it does.
TextMatcher = Callable[[Sequence[str], str, int, int], list[tuple[int, list[LineMatch]]]]


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def _line_index(value: int | None, line_count: int, fallback: int) -> int:
    """A 1-based (or negative, from the end) line bound as a 0-based index."""
    if value is None or value == 0:
        return fallback
    index = value - 1 if value > 0 else line_count + value
    return _clamp(index, 0, max(0, line_count - 1))


class NotesStore:
    """The logical notes of one branch, fed entry by entry. ``matcher`` goes through the
    notes' texts for :meth:`search_contents` (a service may have it done out of its process)."""

    __slots__ = ("_files", "_last_applied_id", "_matcher")

    def __init__(self, matcher: TextMatcher = matching_texts) -> None:
        self._files: dict[str, NoteFile] = {}
        self._last_applied_id: str | None = None
        self._matcher = matcher

    # -- building the state -------------------------------------------------------------

    @classmethod
    def from_stored_branch(cls, entries: Iterable[StoredEntry]) -> NotesStore:
        """The state at the end of ``entries`` (root first, stored form): the latest valid
        snapshot, then every note entry after it."""
        branch = list(entries)
        start = 0
        for index in range(len(branch) - 1, -1, -1):
            entry = branch[index]
            if (
                _custom_type(entry) == NOTE_SNAPSHOT_CUSTOM_TYPE
                and parse_note_snapshot(entry.get("data")) is not None
            ):
                start = index
                break
        store = cls()
        for entry in branch[start:]:
            store.observe_stored(entry)
        return store

    @classmethod
    def from_branch(cls, entries: Iterable[SessionEntry]) -> NotesStore:
        """:meth:`from_stored_branch` for entry models."""
        # Only custom entries (or unknown ones, which may be custom entries that fit no
        # model) can be notes, so no other entry is dumped.
        return cls.from_stored_branch(
            stored_form(entry) for entry in entries if isinstance(entry, CustomEntry | UnknownEntry)
        )

    def observe_stored(self, entry: StoredEntry) -> None:
        """Apply ``entry`` (stored form) if it is a valid note or snapshot entry; ignore
        anything else."""
        custom_type = _custom_type(entry)
        entry_id = entry.get("id")
        if custom_type is None or entry_id == self._last_applied_id:
            return
        if custom_type == NOTE_CUSTOM_TYPE:
            note = parse_note_entry(entry.get("data"))
            if note is not None:
                self._apply_note(note)
                self._last_applied_id = entry_id
        elif custom_type == NOTE_SNAPSHOT_CUSTOM_TYPE:
            snapshot = parse_note_snapshot(entry.get("data"))
            if snapshot is not None:
                self._apply_snapshot(snapshot)
                self._last_applied_id = entry_id

    def observe(self, entry: SessionEntry) -> None:
        """:meth:`observe_stored` for an entry model."""
        if isinstance(entry, CustomEntry | UnknownEntry):
            self.observe_stored(stored_form(entry))

    def commit(self, entry_id: str, data: NoteEntryData) -> None:
        """Apply a note entry this process just appended as ``entry_id``.

        Idempotent with :meth:`observe`: whichever of the two sees the entry first applies
        it, so a host may both subscribe the store and commit its own writes.
        """
        if entry_id != self._last_applied_id:
            self._apply_note(data)
            self._last_applied_id = entry_id

    def _apply_note(self, data: NoteEntryData) -> None:
        previous = self._files.get(data.path)
        if data.action == "append" and previous is not None:
            text = previous.text + data.text
            byte_count = previous.byte_count + utf8_length(data.text)
        else:
            text = data.text
            byte_count = utf8_length(text)
        created_at = previous.created_at if previous is not None else data.timestamp
        self._files[data.path] = NoteFile(data.path, text, created_at, data.timestamp, byte_count)

    def _apply_snapshot(self, snapshot: NoteSnapshotData) -> None:
        self._files = {
            file.path: NoteFile(
                file.path, file.text, file.created_at, file.updated_at, utf8_length(file.text)
            )
            for file in snapshot.files
        }

    # -- reading the state ---------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._files)

    def __iter__(self) -> Iterator[NoteFile]:
        return iter(self._files.values())

    def get(self, path: str) -> NoteFile | None:
        return self._files.get(path)

    def note_bytes(self, path: object) -> int:
        """The UTF-8 size of the note a ``path`` argument names, found as :meth:`read_file`
        finds it (0 when there is none, or the path is not a valid note path)."""
        try:
            note = self._files.get(normalize_note_path(path))
        except NotePathError:
            return 0
        return 0 if note is None else note.byte_count

    def snapshot(self, timestamp_ms: int) -> NoteSnapshotData:
        """The whole state as snapshot data (files sorted by path).

        :raises NoteSizeError: the snapshot would exceed 10,000,000 bytes of JSON.
        """
        files = [
            SnapshotFile(
                path=note.path,
                text=note.text,
                created_at=note.created_at,
                updated_at=note.updated_at,
            )
            for note in sorted(self._files.values(), key=lambda note: js_sort_key(note.path))
        ]
        snapshot = NoteSnapshotData(protocol=NOTE_PROTOCOL, timestamp=timestamp_ms, files=files)
        check_snapshot_size(snapshot)
        return snapshot

    # -- operations ----------------------------------------------------------------------

    def list_files_by_prefix(
        self,
        prefix: object = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        file_order_by: FileOrderBy = "name",
        file_order: FileOrder = "ascending",
    ) -> NotesListResult:
        """Note metadata under ``prefix``, ordered, at most ``max_results`` (1-100)."""
        key_prefix = normalize_note_prefix(prefix)
        selected = [note for note in self._files.values() if note.path.startswith(key_prefix)]
        descending = file_order == "descending"
        if file_order_by == "created_at":
            selected.sort(key=lambda note: note.created_at, reverse=descending)
        elif file_order_by == "updated_at":
            selected.sort(key=lambda note: note.updated_at, reverse=descending)
        else:
            # By name as the extension sorts them: localeCompare, not code points.
            selected.sort(key=lambda note: js_locale_sort_key(note.path), reverse=descending)
        limit = _clamp(max_results, 1, MAX_LIST_RESULTS)
        return {"source": SOURCE, "files": [metadata(note) for note in selected[:limit]]}

    def read_file(
        self, path: str, start_line: int | None = None, stop_line: int | None = None
    ) -> NotesReadResult:
        """A note's metadata and a line range of its text (``file`` is ``None`` if absent).

        Lines are split on ``\\n`` and numbered from 1; a negative bound counts from the end
        (-1 is the last line); 0 or ``None`` means the first/last line; bounds are clamped.
        """
        note = self._files.get(normalize_note_path(path))
        if note is None:
            return {"source": SOURCE, "file": None}
        lines = note.text.split("\n")
        start = _line_index(start_line, len(lines), 0)
        stop = _line_index(stop_line, len(lines), len(lines) - 1)
        content: NoteContent = {
            **metadata(note),
            "content": "\n".join(lines[start : stop + 1]) if start <= stop else "",
            "start_line": start + 1,
            "stop_line": max(start, stop) + 1,
            "total_lines": len(lines),
        }
        return {"source": SOURCE, "file": content}

    def search_contents(
        self,
        query: str,
        path_prefix: object = None,
        max_files: int = DEFAULT_MAX_RESULTS,
        max_matches_per_file: int = DEFAULT_MAX_RESULTS,
        recent_file_first: bool = False,
    ) -> NotesSearchResult:
        """Lines containing ``query`` (case-sensitive), grouped by file.

        Files are taken in path order, or newest-created first with ``recent_file_first``;
        at most ``max_files`` files with matches and ``max_matches_per_file`` lines each.
        """
        key_prefix = normalize_note_prefix(path_prefix)
        candidates = [note for note in self._files.values() if note.path.startswith(key_prefix)]
        if recent_file_first:
            candidates.sort(key=lambda note: note.created_at, reverse=True)
        else:
            candidates.sort(key=lambda note: js_sort_key(note.path))
        file_limit = _clamp(max_files, 1, MAX_SEARCH_FILES)
        match_limit = _clamp(max_matches_per_file, 1, MAX_MATCHES_PER_FILE)
        texts = [note.text for note in candidates]
        found: list[FileMatches] = [
            {"path": candidates[index].path, "matches": matches}
            for index, matches in self._matcher(texts, query, match_limit, file_limit)
        ]
        return {"source": SOURCE, "files": found}

    def prepare_write(
        self, action: NoteAction, path: str, text: str, timestamp_ms: int
    ) -> PreparedNoteWrite:
        """Validate a write (replace) or append and build the entry that records it.

        :raises NotePathError: the path is not a valid note path.
        :raises NoteSizeError: the note would exceed 1,000,000 UTF-8 bytes.
        """
        key = normalize_note_path(path)
        previous = self._files.get(key)
        if action == "append" and previous is not None:
            byte_count = previous.byte_count + utf8_length(text)
            new_text = previous.text + text
        else:
            byte_count = utf8_length(text)
            new_text = text
        if byte_count > MAX_NOTE_BYTES:
            raise NoteSizeError("Note file exceeds the 1,000,000-byte limit")
        created_at = previous.created_at if previous is not None else timestamp_ms
        note = NoteFile(key, new_text, created_at, timestamp_ms, byte_count)
        data = NoteEntryData(
            protocol=NOTE_PROTOCOL, action=action, path=key, text=text, timestamp=timestamp_ms
        )
        return PreparedNoteWrite(data=data, result={"source": SOURCE, "file": metadata(note)})


def _custom_type(entry: StoredEntry) -> str | None:
    """The ``customType`` of a plain custom entry (``None`` for every other entry type)."""
    custom_type = entry.get("customType")
    if entry.get("type") != "custom" or not isinstance(custom_type, str):
        return None
    return custom_type
