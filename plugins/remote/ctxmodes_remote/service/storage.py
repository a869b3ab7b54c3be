"""Where the service keeps accounts, tokens, notes and recorded history.

:class:`Storage` is the interface the engine uses; :class:`SqliteStorage` implements it in
one SQLite file (WAL journal, ``synchronous=FULL``: a write method returns only once its
transaction is on disk, so an acknowledged note survives a crash). Every read and write is
keyed by account first: no method can reach another account's rows.

Notes are kept as the sequence of writes and appends that made them, as the session file
keeps them for Local; the engine replays them into the shared notes store. History is kept
as items in arrival order, each under its window.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from ctxmodes import CtxmodesError
from ctxmodes.session import codec

NoteAction = Literal["write", "append"]


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    name: str


@dataclass(frozen=True, slots=True)
class NoteEvent:
    action: NoteAction
    path: str
    text: str
    timestamp: int


@dataclass(frozen=True, slots=True)
class RecordedImage:
    """An image of a recorded item as the contract's ``images`` carry it: raw base64
    ``data``, its ``mime_type``, and the ``detail`` it was sent with (``None``: none)."""

    data: str
    mime_type: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class RecordedItem:
    """One history item under its window; ``item_key`` is unique within the window.

    ``content`` holds a placeholder where an image was; the images themselves are in
    ``images``, in order, and only ``read_item`` answers them."""

    window_id: str
    item_key: str
    role: str
    content: str
    tool_name: str | None = None
    tool_namespace: str | None = None
    images: tuple[RecordedImage, ...] = ()


def images_column(images: Sequence[RecordedImage]) -> str | None:
    """The ``images`` column value of an item's images (``NULL`` when it has none)."""
    if not images:
        return None
    return codec.dumps(
        [{"data": i.data, "mime_type": i.mime_type, "detail": i.detail} for i in images]
    ).decode()


def images_of_column(value: object) -> tuple[RecordedImage, ...]:
    """The images an ``images`` column value holds (none for ``NULL``, a row written
    before the column existed)."""
    if not isinstance(value, str):
        return ()
    return tuple(
        RecordedImage(image["data"], image["mime_type"], image.get("detail"))
        for image in codec.loads(value)
    )


def recorded_item(row: Sequence[Any]) -> RecordedItem:
    """The item of a ``history_items`` row read as :data:`ITEM_COLUMNS`."""
    window_id, item_key, role, content, tool_name, tool_namespace, images = row
    return RecordedItem(
        window_id, item_key, role, content, tool_name, tool_namespace, images_of_column(images)
    )


#: The columns :func:`recorded_item` reads, in its order.
ITEM_COLUMNS = "window_id, item_key, role, content, tool_name, tool_namespace, images"


@dataclass(frozen=True, slots=True)
class HistorySearch:
    """Which recorded items a search wants: those whose content contains ``text`` (a
    literal, case-sensitive substring), narrowed by the fields that are not ``None``; the
    first ``limit`` in arrival order, or the last ``limit`` with ``newest_first``."""

    text: str
    limit: int
    window_id: str | None = None
    role: str | None = None
    tool_name: str | None = None
    tool_namespace: str | None = None
    newest_first: bool = False

    def query(
        self, scope: tuple[str, str, str], contains: str, pattern: str, placeholder: str
    ) -> tuple[str, list[object]]:
        """The ``SELECT`` of the items in ``scope`` (account, session, agent) that
        ``contains`` (a condition on ``content`` taking ``pattern``) accepts, and its
        parameters, in the database's ``placeholder`` style."""
        clauses = [f"{column} = {placeholder}" for column in ("account_id", "session_id", "agent")]
        clauses.append(contains)
        params: list[object] = [*scope, pattern]
        for column in ("window_id", "role", "tool_name", "tool_namespace"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(f"{column} = {placeholder}")
                params.append(value)
        order = "DESC" if self.newest_first else "ASC"
        sql = (
            "SELECT window_id, item_key, role, content, tool_name, tool_namespace "
            f"FROM history_items WHERE {' AND '.join(clauses)} "
            f"ORDER BY seq {order} LIMIT {int(self.limit)}"
        )
        return sql, params

    def in_arrival_order(self, rows: Iterable[Sequence[Any]]) -> list[RecordedItem]:
        found = [RecordedItem(*row) for row in rows]
        return found[::-1] if self.newest_first else found


class Storage(Protocol):
    def create_account(self, account_id: str, name: str) -> Account:
        """:raises AccountExistsError: the name is taken."""
        ...

    def account_by_name(self, name: str) -> Account | None: ...

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None: ...

    def account_for_token(self, token_hash: str) -> Account | None: ...

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, NoteEvent]]:
        """The session's note writes with a sequence number above ``after``, oldest first."""
        ...

    def append_note_event(self, account_id: str, session_id: str, event: NoteEvent) -> int:
        """Persist one note write durably; returns its sequence number."""
        ...

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, RecordedItem]]:
        """The agent's recorded items with a sequence number above ``after``, in arrival
        order."""
        ...

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[RecordedItem]
    ) -> None:
        """Persist items durably, in order (an item already recorded is left as it is)."""
        ...

    def search_history(
        self, account_id: str, session_id: str, agent: str, search: HistorySearch
    ) -> list[RecordedItem]:
        """The agent's recorded items ``search`` selects, in arrival order, found by the
        database (the session is not read whole)."""
        ...

    def ping(self) -> None:
        """A trivial round trip; raises :class:`StorageUnavailableError` when it fails."""
        ...

    def close(self) -> None: ...


def history_rows(
    account_id: str, session_id: str, agent: str, items: Sequence[RecordedItem]
) -> list[tuple[str | None, ...]]:
    """The ``history_items`` column values of ``items``, in the schema's column order."""
    return [
        (
            account_id,
            session_id,
            agent,
            item.window_id,
            item.item_key,
            item.role,
            item.content,
            item.tool_name,
            item.tool_namespace,
            images_column(item.images),
        )
        for item in items
    ]


class AccountExistsError(CtxmodesError):
    """An account of that name exists already."""


class StorageUnavailableError(CtxmodesError):
    """The storage cannot be reached or refused the operation; nothing was half-written."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    account_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS tokens (
    token_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(account_id),
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS note_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    action TEXT NOT NULL,
    path TEXT NOT NULL,
    text TEXT NOT NULL,
    timestamp INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS note_events_session ON note_events (account_id, session_id, seq);
CREATE TABLE IF NOT EXISTS history_items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    window_id TEXT NOT NULL,
    item_key TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_name TEXT,
    tool_namespace TEXT,
    images TEXT,
    UNIQUE (account_id, session_id, agent, window_id, item_key)
);
CREATE INDEX IF NOT EXISTS history_items_agent
    ON history_items (account_id, session_id, agent, seq);
"""

DATABASE_NAME = "ctxmodes-serve.sqlite3"


def _add_images_column(db: sqlite3.Connection) -> None:
    """Migrate a file made before items kept their images: add the ``images`` column
    (``NULL`` in the rows already there). Checked first, so running it again is a no-op."""
    # Under the write lock, so two processes opening an old file at once add it once.
    db.execute("BEGIN IMMEDIATE")
    try:
        columns = {row[1] for row in db.execute("PRAGMA table_info(history_items)")}
        if "images" not in columns:
            db.execute("ALTER TABLE history_items ADD COLUMN images TEXT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class SqliteStorage:
    """:class:`Storage` in one SQLite file. Not thread-safe: one thread uses it at a time.

    Several processes may share the file (SQLite locks it; a writer waits up to
    ``busy_timeout_ms`` for another).
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 10_000) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Create the file owner-only before SQLite opens it (its journal files follow
            # the database's mode).
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            os.chmod(path, 0o600)
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_SCHEMA)
            _add_images_column(self._db)
        except (OSError, sqlite3.Error) as exc:
            raise StorageUnavailableError(f"cannot open the database {path}: {exc}") from None

    @classmethod
    def in_directory(cls, directory: Path) -> SqliteStorage:
        return cls(directory / DATABASE_NAME)

    def close(self) -> None:
        self._db.close()

    def ping(self) -> None:
        self._execute("SELECT 1").fetchone()

    def _execute(self, query: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(query, params)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None

    # -- accounts and tokens --------------------------------------------------------------

    def create_account(self, account_id: str, name: str) -> Account:
        try:
            self._execute(
                "INSERT INTO accounts (account_id, name) VALUES (?, ?)", (account_id, name)
            )
        except sqlite3.IntegrityError:
            raise AccountExistsError(f"an account named {name!r} exists already") from None
        return Account(account_id, name)

    def account_by_name(self, name: str) -> Account | None:
        row = self._execute(
            "SELECT account_id, name FROM accounts WHERE name = ?", (name,)
        ).fetchone()
        return Account(row[0], row[1]) if row else None

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None:
        self._execute(
            "INSERT INTO tokens (token_hash, account_id, created_at) VALUES (?, ?, ?)",
            (token_hash, account_id, created_at),
        )

    def account_for_token(self, token_hash: str) -> Account | None:
        row = self._execute(
            "SELECT accounts.account_id, accounts.name FROM tokens "
            "JOIN accounts ON accounts.account_id = tokens.account_id "
            "WHERE tokens.token_hash = ?",
            (token_hash,),
        ).fetchone()
        return Account(row[0], row[1]) if row else None

    # -- notes ----------------------------------------------------------------------------

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, NoteEvent]]:
        rows = self._execute(
            "SELECT seq, action, path, text, timestamp FROM note_events "
            "WHERE account_id = ? AND session_id = ? AND seq > ? ORDER BY seq",
            (account_id, session_id, after),
        )
        return [(row[0], NoteEvent(row[1], row[2], row[3], row[4])) for row in rows]

    def append_note_event(self, account_id: str, session_id: str, event: NoteEvent) -> int:
        cursor = self._execute(
            "INSERT INTO note_events (account_id, session_id, action, path, text, timestamp) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (account_id, session_id, event.action, event.path, event.text, event.timestamp),
        )
        return int(cursor.lastrowid or 0)

    # -- history --------------------------------------------------------------------------

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, RecordedItem]]:
        rows = self._execute(
            f"SELECT seq, {ITEM_COLUMNS} "
            "FROM history_items WHERE account_id = ? AND session_id = ? AND agent = ? "
            "AND seq > ? ORDER BY seq",
            (account_id, session_id, agent, after),
        )
        return [(row[0], recorded_item(row[1:])) for row in rows]

    def search_history(
        self, account_id: str, session_id: str, agent: str, search: HistorySearch
    ) -> list[RecordedItem]:
        # ``instr`` compares characters exactly (``LIKE`` would fold ASCII case).
        scope = (account_id, session_id, agent)
        sql, params = search.query(scope, "instr(content, ?) > 0", search.text, "?")
        return search.in_arrival_order(self._execute(sql, params))

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[RecordedItem]
    ) -> None:
        if not items:
            return
        rows = history_rows(account_id, session_id, agent, items)
        # One transaction for the whole exchange: one sync, all or nothing.
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR IGNORE INTO history_items (account_id, session_id, agent, "
                    "window_id, item_key, role, content, tool_name, tool_namespace, images) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None


def open_storage(data: Path, database: str | None = None) -> Storage:
    """The storage a service uses: Postgres when ``database`` is a ``postgresql://`` URL,
    else the SQLite file in ``data``.

    :raises StorageUnavailableError: the database cannot be opened or migrated.
    """
    if database is None:
        return SqliteStorage.in_directory(data)
    if not database.startswith(("postgresql://", "postgres://")):
        raise StorageUnavailableError("--database takes a postgresql:// URL")
    try:
        from ctxmodes_remote.service.postgres_storage import PostgresStorage
    except ImportError as exc:
        if not (exc.name or "").startswith("psycopg"):
            raise
        raise StorageUnavailableError(
            "Postgres storage needs its extra: pip install 'ctxmodes[postgres]'"
        ) from None
    return PostgresStorage(database)


def backup_sqlite(data: Path, target: Path) -> None:
    """Copy the SQLite database in ``data`` to the new file ``target`` with SQLite's online
    backup (consistent while the service writes). Restoring is putting the copy, renamed
    :data:`DATABASE_NAME`, into a data directory with the same ``master.keys``.

    :raises StorageUnavailableError: no database in ``data``, or ``target`` exists.
    """
    source_path = data / DATABASE_NAME
    if not source_path.is_file():
        raise StorageUnavailableError(f"no database in {data}")
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise StorageUnavailableError(f"cannot create {target}: {exc.strerror or exc}") from None
    os.close(descriptor)
    try:
        source = sqlite3.connect(f"file:{source_path}?mode=ro", uri=True)
        try:
            destination = sqlite3.connect(target)
            try:
                source.backup(destination)
            finally:
                destination.close()
        finally:
            source.close()
    except sqlite3.Error as exc:
        target.unlink(missing_ok=True)
        raise StorageUnavailableError(f"backup failed: {exc}") from None
