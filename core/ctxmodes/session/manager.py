"""``SessionManager``: Pi's session API over append-only JSONL session trees.

A session is a header line followed by entries; each entry names its parent, so the file holds
a tree. The *leaf* is the entry new appends attach to; it starts at the last entry of the file
and moves with :meth:`SessionManager.branch` / :meth:`SessionManager.reset_leaf` (moves that
are not persisted, as in Pi). :meth:`SessionManager.build_session_context` gives what the model
sees at the leaf.

Files written here are read by Pi 0.85 exactly as Pi reads its own. Deliberate differences:

* **Writing starts with the first message.** Pi keeps a new session in memory until the
  first assistant message and loses sessions that end before it; here a new session's file
  is created when its first ``message`` entry (the first prompt) is appended, holding the
  header, the entries made before it (model, thinking level, a mode's records) and the
  message; every later entry is appended as it is made. A session closed before its first
  message leaves no file. ``create_branched_session`` writes the new file at once.
* **Files are never rewritten.** Version 1 and 2 files are migrated in memory only (Pi rewrites
  them on open). Appending to a version 1 file is refused, because its entry ids exist only in
  memory; a branched session or :meth:`SessionManager.fork_from` makes a version 3 copy. A
  torn last line is terminated by the first append rather than on open.
* **One writer per file.** A manager that may append holds a lock on its file; a second one
  gets :class:`~ctxmodes.session.errors.SessionLockedError`. Open with ``read_only=True`` to
  read a session another process is writing.
* **Bad lines are reported**, not silently dropped: :attr:`SessionManager.skipped_lines`, and
  structural problems (duplicate ids, parent cycles) in :attr:`SessionManager.warnings`.

Durability of appends is set per manager (:class:`~ctxmodes.session.writer.Durability`,
``fsync`` by default), and so is where new ids and timestamps come from
(:class:`~ctxmodes.session.ids.IdentitySource`, Pi's generation by default).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar, overload

from ctxmodes.session import codec
from ctxmodes.session import entries as make
from ctxmodes.session.branch_path import BranchPath
from ctxmodes.session.context import (
    ContextBuilder,
    SessionContext,
    context_entry_indexes,
    path_model,
)
from ctxmodes.session.entries import Stamp, is_model, json_of
from ctxmodes.session.errors import (
    EntryNotFoundError,
    NotASessionError,
    ReadOnlySessionError,
    SessionError,
    SessionWriteError,
)
from ctxmodes.session.ids import PI_IDENTITY, IdentitySource, validate_session_id
from ctxmodes.session.index_arrays import IndexRuns
from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.paths import (
    cwd_filter,
    default_session_dir,
    resolve_path,
    session_file_name,
    sessions_dir,
)
from ctxmodes.session.reader import SkippedLine, read_session_file, scan_lines
from ctxmodes.session.store import NO_ENTRY, ActivePath, EntryTable, IndexWarning, StoredRun
from ctxmodes.session.writer import Durability, SessionWriter

if TYPE_CHECKING:
    # The models (pydantic) load when an entry is first asked for as a model: opening a
    # file and reading its context as JSON never needs them.
    from pydantic import BaseModel

    from ctxmodes.session.listing import SessionInfo
    from ctxmodes.session.models import AgentMessage, SessionEntry, SessionHeader
    from ctxmodes.session.tree import SessionTreeNode
    from ctxmodes.session.tree_shape import TreeShape

__all__ = ["EntryCallback", "SessionManager", "SessionPosition"]

JsonObject = dict[str, Any]
_T = TypeVar("_T")
EntryCallback = Callable[["SessionEntry"], None]

_SUMMARY_ROLES: Final = ("branchSummary", "compactionSummary")
_DECODE_BATCH: Final = 1024


@dataclass(frozen=True, slots=True)
class SessionPosition:
    """The state of the session with the leaf at one entry (or before the first one)."""

    leaf_id: str | None
    branch_ids: list[str]
    context_entry_ids: list[str]
    context: SessionContext


@dataclass(frozen=True, slots=True)
class PositionIndexes:
    """A :class:`SessionPosition` as entry indexes: ``ids[i]`` is the id of entry ``i``, so
    a reader can go through a long path without a list of its ids (treat all as read-only)."""

    leaf_id: str | None
    ids: list[str]
    branch: IndexRuns
    context_entries: IndexRuns
    context: SessionContext

    def position(self) -> SessionPosition:
        ids = self.ids
        return SessionPosition(
            leaf_id=self.leaf_id,
            branch_ids=list(map(ids.__getitem__, self.branch)),
            context_entry_ids=list(map(ids.__getitem__, self.context_entries)),
            context=self.context,
        )


def entry_from_json(value: JsonObject) -> SessionEntry:
    """The entry model of stored JSON (the models, and pydantic, load on the first call)."""
    from ctxmodes.session import models

    return models.entry_from_json(value)


def _header(
    identity: IdentitySource,
    cwd: str,
    session_id: str | None = None,
    parent_session: str | None = None,
) -> JsonObject:
    chosen = validate_session_id(session_id if session_id is not None else identity.session_id())
    return make.header(cwd, chosen, identity.timestamp(), parent_session)


class _Entries(Sequence["SessionEntry"]):
    """Entries of a session by index, decoded and validated when read."""

    def __init__(
        self,
        indexes: Sequence[int],
        resolve: Callable[[int], SessionEntry],
        preload: Callable[[Sequence[int]], object],
    ) -> None:
        self._indexes = indexes
        self._resolve = resolve
        self._preload = preload

    def __len__(self) -> int:
        return len(self._indexes)

    @overload
    def __getitem__(self, item: int) -> SessionEntry: ...
    @overload
    def __getitem__(self, item: slice) -> Sequence[SessionEntry]: ...
    def __getitem__(self, item: int | slice) -> SessionEntry | Sequence[SessionEntry]:
        if isinstance(item, slice):
            return _Entries(self._indexes[item], self._resolve, self._preload)
        return self._resolve(self._indexes[item])

    def __iter__(self) -> Iterator[SessionEntry]:
        # Read the file in batches rather than one pread per entry.
        for start in range(0, len(self._indexes), _DECODE_BATCH):
            batch = self._indexes[start : start + _DECODE_BATCH]
            self._preload(batch)
            for index in batch:
                yield self._resolve(index)


def _make_directory(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SessionError(
            f"cannot create session directory {directory}: {exc.strerror or exc}"
        ) from None


class SessionManager:
    """An open session: its entries, its leaf, and appends to its file.

    Create one with :meth:`create`, :meth:`open`, :meth:`continue_recent`, :meth:`in_memory`
    or :meth:`fork_from`; call :meth:`close` (or use it as a context manager) when done. Each
    takes an ``identity``: the source of every id and timestamp the manager generates (for
    its header, its appends and the sessions it branches into).
    """

    def __init__(
        self,
        *,
        cwd: str,
        session_dir: Path | None,
        session_file: Path | None,
        header: JsonObject,
        table: EntryTable,
        skipped: Sequence[SkippedLine] = (),
        persist: bool,
        read_only: bool = False,
        appendable: bool = True,
        durability: Durability = Durability.FSYNC,
        writer: SessionWriter | None = None,
        identity: IdentitySource = PI_IDENTITY,
    ) -> None:
        """Internal; use the class methods."""
        self._cwd = cwd
        self._session_dir = session_dir
        self._session_file = session_file
        self._persist = persist
        self._read_only = read_only
        self._appendable = appendable
        self._durability = durability
        self._writer = writer
        self._identity = identity
        #: Lines of a session whose file is not written yet, held until its first message.
        self._held: list[bytes] = []
        self._prelude: Callable[[], object] | None = None
        self._subscribers: list[EntryCallback] = []
        self._install(header, table, skipped)

    def _install(
        self, header: JsonObject, table: EntryTable, skipped: Sequence[SkippedLine]
    ) -> None:
        self._header = header
        self._table = table
        self._skipped = tuple(skipped)
        self._models: dict[int, SessionEntry] = {}
        self._path = ActivePath(table, len(table) - 1 if len(table) else None)
        self._context = ContextBuilder(table)

    # ================================================================ construction

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        durability: Durability = Durability.FSYNC,
        identity: IdentitySource = PI_IDENTITY,
    ) -> SessionManager:
        """Start a new session for ``cwd`` in ``session_dir`` (default: Pi's directory for it).

        Nothing is written until the first message is appended.
        """
        resolved_cwd = resolve_path(cwd)
        directory = Path(resolve_path(session_dir)) if session_dir else default_session_dir(cwd)
        header = _header(identity, resolved_cwd, session_id, parent_session)
        return cls(
            cwd=resolved_cwd,
            session_dir=directory,
            session_file=directory / session_file_name(header["timestamp"], header["id"]),
            header=header,
            table=EntryTable.from_entries([]),
            persist=True,
            durability=durability,
            identity=identity,
        )

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        cwd_override: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        durability: Durability = Durability.FSYNC,
        identity: IdentitySource = PI_IDENTITY,
        preload: bool = True,
    ) -> SessionManager:
        """Open the session file at ``path``.

        As in Pi: a missing file starts a new session at ``path``, written (as by
        :meth:`create`) when its first message is appended, and refused then if another
        writer created the file meanwhile; an empty file gets a fresh header; a non-empty
        file whose first record is not a session header raises :class:`NotASessionError`.
        The session's cwd is the header's unless
        ``cwd_override`` is given; ``session_dir`` (for branched sessions) defaults to the
        file's directory.

        With ``read_only`` the file is never locked or modified and appends raise
        :class:`ReadOnlySessionError`; a missing file is then an error.

        With ``preload`` (the default) the end of the file, where the newest context lives,
        is decoded while it is indexed, and every entry read is kept; a command that reads
        through the session once passes ``False``: it holds only the index, and entries
        are decoded each time they are read.
        """
        file = Path(resolve_path(path))
        directory = Path(resolve_path(session_dir)) if session_dir else file.parent
        override = resolve_path(cwd_override) if cwd_override is not None else None
        if not file.exists():
            if read_only:
                raise SessionError(f"no such session file: {file}")
            cwd = override or resolve_path(os.getcwd())
            return cls(
                cwd=cwd,
                session_dir=directory,
                session_file=file,
                header=_header(identity, cwd),
                table=EntryTable.from_entries([]),
                persist=True,
                durability=durability,
                identity=identity,
            )
        # Lock before reading, so that what is read is what later appends continue.
        writer = None if read_only else SessionWriter.open_existing(file, durability)
        try:
            scan = read_session_file(file, preload=preload)
            header = scan.header
            if header is None:
                # An empty file: Pi writes a fresh header into it right away.
                header = _header(identity, override or resolve_path(os.getcwd()))
                if writer is not None:
                    writer.append(codec.dumps_line(header))
            legacy = scan.original_version < 2
            if legacy and writer is not None:
                writer.close()
                writer = None
            table = EntryTable.from_scan(scan, file, keep=preload)
        except BaseException:
            if writer is not None:
                writer.close()
            raise
        header_cwd = header.get("cwd")
        return cls(
            cwd=override
            or (header_cwd if isinstance(header_cwd, str) else resolve_path(os.getcwd())),
            session_dir=directory,
            session_file=file,
            header=header,
            table=table,
            skipped=scan.skipped,
            persist=True,
            read_only=read_only,
            appendable=not legacy,
            durability=durability,
            writer=writer,
            identity=identity,
        )

    @classmethod
    def continue_recent(
        cls,
        cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        *,
        durability: Durability = Durability.FSYNC,
        identity: IdentitySource = PI_IDENTITY,
    ) -> SessionManager:
        """Open the most recently modified session of ``cwd``, or create one.

        In a custom ``session_dir`` (which may hold several projects) only sessions whose
        header cwd is ``cwd`` are considered.
        """
        directory = Path(resolve_path(session_dir)) if session_dir else default_session_dir(cwd)
        from ctxmodes.session.listing import find_most_recent_session

        recent = find_most_recent_session(directory, cwd_filter(cwd, directory))
        if recent is None:
            return cls.create(cwd, directory, durability=durability, identity=identity)
        return cls.open(recent, directory, cwd, durability=durability, identity=identity)

    @classmethod
    def in_memory(
        cls,
        cwd: str | os.PathLike[str] | None = None,
        *,
        session_id: str | None = None,
        parent_session: str | None = None,
        entries: Iterable[Mapping[str, Any] | BaseModel] | None = None,
        identity: IdentitySource = PI_IDENTITY,
    ) -> SessionManager:
        """A session that is never written to disk.

        ``entries`` restores a session kept elsewhere: stored JSON objects (or models), with
        or without the header. Without one a new header is made; an old header is migrated.
        """
        resolved_cwd = resolve_path(cwd if cwd is not None else os.getcwd())
        records = [json_of(entry) for entry in entries or ()]
        headers = [record for record in records if record.get("type") == "session"]
        if headers:
            records.remove(headers[0])
            records.insert(0, headers[0])
        else:
            records.insert(0, _header(identity, resolved_cwd, session_id, parent_session))
        scan = scan_lines(b"".join(codec.dumps_line(record) for record in records))
        if scan.header is None:
            raise NotASessionError("the given entries do not form a session")
        table = EntryTable.from_scan(scan, None)
        return cls(
            cwd=resolved_cwd,
            session_dir=None,
            session_file=None,
            header=scan.header,
            table=table,
            skipped=scan.skipped,
            persist=False,
            identity=identity,
        )

    @classmethod
    def fork_from(
        cls,
        source_path: str | os.PathLike[str],
        target_cwd: str | os.PathLike[str],
        session_dir: str | os.PathLike[str] | None = None,
        *,
        session_id: str | None = None,
        durability: Durability = Durability.FSYNC,
        identity: IdentitySource = PI_IDENTITY,
    ) -> SessionManager:
        """Copy a whole session (every branch, same entry ids) into a new file for ``target_cwd``.

        The new header records the source in ``parentSession``. Unlike Pi 0.85, a version 1
        or 2 source is written in migrated (version 3) form.
        """
        source = Path(resolve_path(source_path))
        resolved_cwd = resolve_path(target_cwd)
        if not source.exists():
            raise SessionError(f"Cannot fork: source session file is empty or invalid: {source}")
        scan = read_session_file(source)
        if scan.header is None:
            raise SessionError(f"Cannot fork: source session file is empty or invalid: {source}")
        directory = (
            Path(resolve_path(session_dir)) if session_dir else default_session_dir(target_cwd)
        )
        header = _header(identity, resolved_cwd, session_id, str(source))
        from ctxmodes.session.branching import copied_lines, whole_copy

        table = EntryTable.from_scan(scan, source)
        try:
            lines = copied_lines(table, whole_copy(table))
        finally:
            table.close()
        file = directory / session_file_name(header["timestamp"], header["id"])
        _make_directory(directory)
        SessionWriter.create(file, codec.dumps_line(header) + b"".join(lines), durability).close()
        return cls.open(file, directory, durability=durability, identity=identity)

    @staticmethod
    def list_sessions(
        cwd: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None
    ) -> list[SessionInfo]:
        """Sessions of ``cwd``, most recently active first (Pi's ``SessionManager.list``)."""
        from ctxmodes.session.listing import list_sessions_in

        directory = Path(resolve_path(session_dir)) if session_dir else default_session_dir(cwd)
        return list_sessions_in(directory, cwd_filter(cwd, directory))

    @staticmethod
    def list_all(session_dir: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        """Sessions of every project (or of one flat ``session_dir``), most recent first."""
        from ctxmodes.session.listing import list_session_files, list_sessions_in, read_session_info

        if session_dir is not None:
            return list_sessions_in(Path(resolve_path(session_dir)))
        root = sessions_dir()
        try:
            projects = [root / name for name in os.listdir(root) if (root / name).is_dir()]
        except OSError:
            return []
        infos = [
            info
            for project in projects
            for path in list_session_files(project)
            if (info := read_session_info(path)) is not None
        ]
        infos.sort(key=lambda info: info.modified, reverse=True)
        return infos

    # ================================================================ properties

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def session_dir(self) -> Path | None:
        return self._session_dir

    @property
    def session_file(self) -> Path | None:
        return self._session_file

    @property
    def session_id(self) -> str:
        session_id: str = self._header["id"]
        return session_id

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def durability(self) -> Durability:
        return self._durability

    @property
    def identity(self) -> IdentitySource:
        """Where this manager's new ids and timestamps come from."""
        return self._identity

    @property
    def skipped_lines(self) -> tuple[SkippedLine, ...]:
        """Lines of the file that are not part of the session (blank, malformed, …)."""
        return self._skipped

    @property
    def warnings(self) -> tuple[IndexWarning, ...]:
        """Structural problems found when indexing (duplicate ids, parent cycles)."""
        return tuple(self._table.warnings)

    def is_persisted(self) -> bool:
        return self._persist

    def get_header(self) -> SessionHeader | None:
        from ctxmodes.session.models import SessionHeader

        return SessionHeader.model_validate(self._header, strict=False)

    def get_header_json(self) -> JsonObject:
        """The header as stored (after in-memory migration); treat as read-only."""
        return self._header

    # ================================================================ lifecycle

    def flush(self) -> None:
        """Write out appends buffered under ``Durability.NONE``."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Flush, release the file lock and close the file. The manager is unusable after."""
        try:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        finally:
            self._table.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def subscribe(self, callback: EntryCallback) -> Callable[[], None]:
        """Call ``callback`` with every entry appended from now on; returns an unsubscribe.

        Callbacks run after the entry is written and indexed, in subscription order. If one
        raises, the others still run and the first exception is re-raised to the appender
        (the entry stays appended).
        """
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    # ================================================================ appending

    def before_next_append(self, prelude: Callable[[], object] | None) -> None:
        """Call ``prelude`` once, right before the next append decides where it goes (so an
        entry ``prelude`` appends comes first, and a summary's navigation starts after it);
        ``None`` cancels it. Lets a session record state on its first write rather than
        when it is opened."""
        self._prelude = prelude

    def _check_appendable(self) -> None:
        if self._read_only:
            raise ReadOnlySessionError(f"session was opened read-only: {self._session_file}")
        if not self._appendable:
            raise SessionError(
                "cannot append to a version 1 session file without rewriting it; "
                f"create a branched session or fork it first: {self._session_file}"
            )
        prelude, self._prelude = self._prelude, None
        if prelude is not None:
            prelude()

    def _stamp(self) -> Stamp:
        leaf = self._path.leaf
        return Stamp(
            self._identity.entry_id(self._table.by_id),
            self._table.ids[leaf] if leaf is not None else None,
            self._identity.timestamp(),
        )

    def _append(self, entry: JsonObject) -> str:
        """Write and index ``entry``, which a caller made after :meth:`_check_appendable`."""
        try:
            line = codec.dumps_line(entry)
        except codec.JsonEncodeError as exc:
            raise SessionError(f"cannot append a {entry.get('type')} entry: {exc}") from None
        if self._persist:
            try:
                self._write(line, entry.get("type"))
            except SessionWriteError as exc:
                if exc.line_kept:
                    # The file holds the entry after all: so must the manager.
                    self._path.push(self._table.add(entry, line))
                raise
        index = self._table.add(entry, line)
        self._path.push(index)
        if self._subscribers:
            self._notify(index)
        entry_id: str = entry["id"]
        return entry_id

    def _write(self, line: bytes, entry_type: object) -> None:
        if self._writer is not None:
            self._writer.append(line)
            return
        if entry_type != "message":
            self._held.append(line)
            return
        assert self._session_file is not None
        _make_directory(self._session_file.parent)
        self._writer = SessionWriter.create(
            self._session_file,
            codec.dumps_line(self._header) + b"".join(self._held) + line,
            self._durability,
        )
        self._held = []

    def is_written(self) -> bool:
        """Whether the session's file exists: a new session is written at its first
        message; an in-memory one never is."""
        return self._writer is not None or (
            self._session_file is not None and not self._held and self._session_file.exists()
        )

    def _notify(self, index: int) -> None:
        entry = self._model(index)
        failure: BaseException | None = None
        for callback in list(self._subscribers):
            try:
                callback(entry)
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def append_message(self, message: AgentMessage | Mapping[str, Any]) -> str:
        """Append a message (user, assistant, toolResult, bashExecution or custom)."""
        stored = json_of(message) if is_model(message) else dict(message)
        if stored.get("role") in _SUMMARY_ROLES:
            raise ValueError(
                "summary messages are stored as compaction / branch_summary entries, "
                "not as message entries"
            )
        self._check_appendable()
        return self._append(make.message(self._stamp(), stored))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        self._check_appendable()
        return self._append(make.thinking_level_change(self._stamp(), thinking_level))

    def append_model_change(self, provider: str, model_id: str) -> str:
        self._check_appendable()
        return self._append(make.model_change(self._stamp(), provider, model_id))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        """Append a compaction (``None`` arguments are left out of the entry)."""
        self._check_appendable()
        entry = make.compaction(
            self._stamp(), summary, first_kept_entry_id, tokens_before, details, from_hook, usage
        )
        return self._append(entry)

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        """Append extension state (never part of the context; ``None`` data is left out)."""
        self._check_appendable()
        return self._append(make.custom(self._stamp(), custom_type, data))

    def append_custom_message_entry(
        self,
        custom_type: str,
        content: str | Sequence[Any],
        display: bool,
        details: Any = None,
    ) -> str:
        """Append an extension message that takes part in the context as a user message."""
        self._check_appendable()
        entry = make.custom_message(self._stamp(), custom_type, content, display, details)
        return self._append(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or, with ``None`` or ``""``, clear) the label of an entry."""
        if self._table.index_of(target_id) is None:
            raise EntryNotFoundError(target_id)
        self._check_appendable()
        return self._append(make.label(self._stamp(), target_id, label))

    def append_session_info(self, name: str) -> str:
        """Name the session (line breaks become spaces; surrounding whitespace is dropped)."""
        self._check_appendable()
        return self._append(make.session_info(self._stamp(), name))

    # ================================================================ navigation

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; the next append starts a new branch there."""
        index = self._table.index_of(entry_id)
        if index is None:
            raise EntryNotFoundError(entry_id)
        self._path.move_to(index)

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append is a new root."""
        self._path.move_to(None)

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        """Move the leaf to ``branch_from_id`` (``None``: new root) and append a branch summary.

        The summary records the previous leaf (or ``"root"``) as ``fromId``.
        """
        target = None
        if branch_from_id is not None:
            target = self._table.index_of(branch_from_id)
            if target is None:
                raise EntryNotFoundError(branch_from_id)
        self._check_appendable()
        leaf = self._path.leaf
        from_id = self._table.ids[leaf] if leaf is not None else "root"
        self._path.move_to(target)
        entry = make.branch_summary(self._stamp(), from_id, summary, details, from_hook, usage)
        return self._append(entry)

    # ================================================================ reading

    def _entries(self, indexes: Sequence[int]) -> _Entries:
        return _Entries(indexes, self._model, self._table.entries)

    def _model(self, index: int) -> SessionEntry:
        model = self._models.get(index)
        if model is None:
            model = entry_from_json(self._table.entry(index))
            self._models[index] = model
        return model

    def _index_or_leaf(self, entry_id: str | None) -> int | None:
        if entry_id is None:
            return self._path.leaf
        return self._table.index_of(entry_id)

    def get_leaf_id(self) -> str | None:
        leaf = self._path.leaf
        return self._table.ids[leaf] if leaf is not None else None

    def get_leaf_entry(self) -> SessionEntry | None:
        leaf = self._path.leaf
        return self._model(leaf) if leaf is not None else None

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        index = self._table.index_of(entry_id)
        return self._model(index) if index is not None else None

    def get_entry_json(self, entry_id: str) -> JsonObject | None:
        """An entry as stored (after in-memory migration); treat as read-only."""
        index = self._table.index_of(entry_id)
        return self._table.entry(index) if index is not None else None

    def read_entries_json(self, entry_ids: Sequence[str]) -> list[JsonObject | None]:
        """The stored JSON of several entries (``None`` for an unknown id), read from the file
        in one pass and not kept: for reading through many entries once, a block at a time,
        where :meth:`get_entry_json` would read each line on its own and cache it."""
        table = self._table
        found = [
            (position, table.index_of(entry_id)) for position, entry_id in enumerate(entry_ids)
        ]
        known = [(position, index) for position, index in found if index is not None]
        out: list[JsonObject | None] = [None] * len(entry_ids)
        for (position, _), entry in zip(
            known, table.peek([index for _, index in known]), strict=True
        ):
            out[position] = entry
        return out

    def stored_run(self, last_id: str, count: int) -> StoredRun | None:
        """The ``count`` entries ending at ``last_id`` along its parent chain, known from the
        index without decoding any of them (their types, the bytes their lines span), when
        they are consecutive lines of the session file — a stretch of work appended one entry
        after the other. ``None`` when they are not, or when a line is not on disk as indexed
        (appended since the file was opened, or an older format migrated in memory)."""
        last = self._table.index_of(last_id)
        return None if last is None else self._table.stored_run(last, count)

    def get_entries(self) -> Sequence[SessionEntry]:
        """Every entry in file order (header excluded), decoded as they are read."""
        return self._entries(range(len(self._table)))

    def get_entries_json(self) -> list[JsonObject]:
        """Every entry as stored (after in-memory migration), in file order, header
        excluded: the objects Pi's ``getEntries`` holds, duplicated ids included. Read in
        one pass and not kept; treat them as read-only."""
        return self._table.peek(range(len(self._table)))

    def entry_count(self) -> int:
        return len(self._table)

    def count_of_type(self, entry_type: str) -> int:
        """How many entries of the file (every branch) are of ``entry_type``, counted
        without decoding any."""
        return self._table.types.count(entry_type)

    def get_children(self, entry_id: str) -> list[SessionEntry]:
        """Entries whose parent is ``entry_id``, in file order."""
        return [self._model(index) for index in self._table.children_of(entry_id)]

    def get_label(self, entry_id: str) -> str | None:
        label = self._table.labels.get(entry_id)
        return label[0] if label is not None else None

    def get_label_timestamp(self, entry_id: str) -> str | None:
        """When the label of ``entry_id`` in force was set: the timestamp of its ``label``
        entry, as stored (``None`` without a label)."""
        label = self._table.labels.get(entry_id)
        stamp = label[1] if label is not None else None
        return stamp if isinstance(stamp, str) else None

    def get_session_name(self) -> str | None:
        """The name set by the last ``session_info`` entry in the file, if any."""
        index = self._table.last_session_info
        if index == NO_ENTRY:
            return None
        name = self._table.entry(index).get("name")
        if not isinstance(name, str):
            return None
        return js_trim(name) or None

    def get_branch_ids(self, from_id: str | None = None) -> list[str]:
        """Ids from the root to ``from_id`` (default: the leaf); empty for an unknown id."""
        return self._along_branch(self._table.ids, from_id)

    def get_branch_path(self, from_id: str) -> BranchPath:
        """The ids of :meth:`get_branch_ids` as a :class:`BranchPath`: its length, membership,
        positions and slices cost O(runs of consecutive lines), not O(entries), so a reader
        can check a long chain without listing it."""
        table = self._table
        index = table.index_of(from_id)
        return BranchPath(table.ids, table.index_of, table.path_runs(index))

    def get_parent_id(self, entry_id: str) -> str | None:
        """The ``parentId`` of the entry with this id as the session tree has it: ``None`` for
        a root, including an entry made a root to break a parent cycle when the file was
        indexed (its stored ``parentId`` names an entry below it). Navigation moves along
        this relation, never along a link the store cut."""
        index = self._table.index_of(entry_id)
        if index is None or index in self._table.cut_roots:
            return None
        return self._table.parent_ids[index]

    def get_branch_types(self, from_id: str | None = None) -> list[object]:
        """The ``type`` of each entry of :meth:`get_branch_ids` (``None`` where the stored
        type is not a string), without decoding entries: lets readers of a long branch decode
        only the entries of the types they need."""
        return self._along_branch(self._table.types, from_id)

    def get_branch(self, from_id: str | None = None) -> Sequence[SessionEntry]:
        """Entries from the root to ``from_id`` (default: the leaf), decoded as read."""
        return self._entries(self._branch_indexes(from_id))

    def _along_branch(self, values: Sequence[_T], from_id: str | None) -> list[_T]:
        """``values[i]`` for each entry ``i`` from the root to ``from_id`` (default: the
        leaf), sliced a run of consecutive entries at a time."""
        table = self._table
        last = self._path.leaf if from_id is None else table.index_of(from_id)
        out: list[_T] = []
        for run in table.path_runs(last):
            out += values[run.start : run.stop]
        return out

    def _branch_indexes(self, from_id: str | None) -> list[int]:
        if from_id is None:
            return list(self._path.indexes)
        index = self._table.index_of(from_id)
        return self._table.path_to(index) if index is not None else []

    def get_tree(self) -> list[SessionTreeNode]:
        """The whole session as a tree (roots in file order; see :mod:`ctxmodes.session.tree`)."""
        from ctxmodes.session.tree import build_tree

        return build_tree(self._table, self._model)

    def get_tree_shape(self) -> TreeShape:
        """The tree as entry positions, with the active path to the leaf: for walking a long
        session without a node per entry (see :mod:`ctxmodes.session.tree_shape`)."""
        from ctxmodes.session.tree_shape import tree_shape

        return tree_shape(self._table, self._path.leaf)

    def build_session_context(self) -> SessionContext:
        """What the model sees at the leaf (incremental: cheap after an append)."""
        return self._context.build(self._path)

    def context_model(self) -> str | None:
        """:meth:`build_session_context`'s model as ``provider/model-id`` (the active
        branch's last ``model_change`` or assistant message), without building the context;
        ``None`` when the branch names none."""
        model = path_model(self._table, self._path) or {}
        provider, model_id = model.get("provider"), model.get("modelId")
        if isinstance(provider, str) and provider and isinstance(model_id, str) and model_id:
            return f"{provider}/{model_id}"
        return None

    def build_context_entries(self) -> Sequence[SessionEntry]:
        """The entries behind :meth:`build_session_context`, in context order."""
        return self._entries(context_entry_indexes(self._table, self._path))

    def current_position(self) -> SessionPosition:
        """Leaf, path, context entries and context at the current leaf (O(path length))."""
        return self.current_position_indexes().position()

    def current_position_indexes(self) -> PositionIndexes:
        """:meth:`current_position` as entry indexes: runs of consecutive ones (O(runs))."""
        table = self._table
        leaf = self._path.leaf
        return PositionIndexes(
            leaf_id=table.ids[leaf] if leaf is not None else None,
            ids=table.ids,
            branch=IndexRuns(table.path_runs(leaf)),
            context_entries=context_entry_indexes(table, self._path),
            context=self.build_session_context(),
        )

    def position_at(self, entry_id: str | None) -> SessionPosition:
        """The same as :meth:`current_position` with the leaf at ``entry_id`` (``None``:
        before the first entry), leaving the real leaf where it is."""
        return self.position_indexes_at(entry_id).position()

    def position_indexes_at(self, entry_id: str | None) -> PositionIndexes:
        """:meth:`position_at` as entry indexes."""
        leaf: int | None = None
        if entry_id is not None:
            leaf = self._table.index_of(entry_id)
            if leaf is None:
                raise EntryNotFoundError(entry_id)
        path = ActivePath(self._table, leaf)
        return PositionIndexes(
            leaf_id=entry_id,
            ids=self._table.ids,
            branch=IndexRuns(self._table.path_runs(leaf)),
            context_entries=context_entry_indexes(self._table, path),
            context=self._context.context_at(leaf),
        )

    # ================================================================ branched sessions

    def create_branched_session(self, leaf_id: str | None = None) -> Path | None:
        """Replace this session by a new one holding only the path to ``leaf_id`` (default:
        the leaf).

        Label entries are dropped from the path (the remaining entries are re-chained, and a
        compaction that kept from a dropped label keeps from the next entry), then one label
        entry is re-created for each labelled entry of the path. A persisted session switches
        to a new file in the same directory, written at once, whose header names the old file
        in ``parentSession``; returns its path. In memory, returns ``None``.

        A read-only manager can do this too (that is how a session being written elsewhere
        is forked): the old file is untouched and the manager becomes the new file's writer.
        Subscribers are not called for the copied entries, only for later appends.
        """
        indexes = self._branch_indexes(leaf_id)
        if not indexes:
            raise EntryNotFoundError(leaf_id)
        table = self._table
        parent_session = str(self._session_file) if self._persist else None
        header = _header(self._identity, self._cwd, None, parent_session)
        from ctxmodes.session.branching import branched_copy, copied_entries, copied_lines

        kept, label_entries = branched_copy(table, indexes, self._identity.entry_id)
        if not self._persist:
            self._install(
                header, EntryTable.from_entries(copied_entries(table, kept) + label_entries), ()
            )
            return None
        assert self._session_dir is not None
        lines = copied_lines(table, kept)
        lines.extend(codec.dumps_line(entry) for entry in label_entries)
        file = self._session_dir / session_file_name(header["timestamp"], header["id"])
        _make_directory(file.parent)
        writer = SessionWriter.create(
            file, codec.dumps_line(header) + b"".join(lines), self._durability
        )
        self.close()
        self._writer = writer
        self._session_file = file
        self._appendable = True
        self._read_only = False
        new_scan = read_session_file(file)
        assert new_scan.header is not None
        self._install(new_scan.header, EntryTable.from_scan(new_scan, file), new_scan.skipped)
        return file
