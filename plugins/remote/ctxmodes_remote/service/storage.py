"""Where the service keeps accounts, tokens, notes and recorded history.

:class:`Storage` is the interface of a database backend; :class:`SqliteStorage` implements
it in one SQLite file (WAL journal, ``synchronous=FULL``: a write method returns only once
its transaction is on disk, so an acknowledged note survives a crash). Every read and write
is keyed by account first: no method can reach another account's rows. A backend never
holds a note's or an item's text: it stores values sealed by
:class:`~ctxmodes_remote.service.sealed_storage.SealedStorage`, the plaintext interface the
engine uses, and finds search candidates through their blind-index tokens.

Notes are kept as the sequence of writes and appends that made them, as the session file
keeps them for Local; the engine replays them into the shared notes store. History is kept
as items in arrival order, each under its window.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from ctxmodes import CtxmodesError
from ctxmodes.session import codec

NoteAction = Literal["write", "append"]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Account:
    account_id: str
    name: str


@dataclass(frozen=True, slots=True)
class IssuedTokenRecord:
    """A token as ``serve token list`` shows it: never the token, only its id (the start of
    its hash), its account and when it was made."""

    token_id: str
    account: Account
    created_at: int


#: Hex digits of a token's hash that make its id.
TOKEN_ID_DIGITS = 16


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

    def filters(self) -> list[tuple[str, str]]:
        """The ``(column, value)`` pairs a candidate must have."""
        columns = ("window_id", "role", "tool_name", "tool_namespace")
        return [(name, getattr(self, name)) for name in columns if getattr(self, name) is not None]


# -- what a backend holds ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SealedNote:
    """A note write as stored: ``sealed`` holds its path and text."""

    action: NoteAction
    timestamp: int
    sealed: bytes


@dataclass(frozen=True, slots=True)
class SealedItem:
    """A history item as stored: ``sealed`` holds its content and images; ``tokens`` (given
    on writes only) are its blind-index tokens."""

    window_id: str
    item_key: str
    role: str
    tool_name: str | None
    tool_namespace: str | None
    sealed: bytes
    tokens: Sequence[int] = ()


@dataclass(frozen=True, slots=True)
class CandidatePage:
    """One page of search candidates: items holding every token in ``tokens`` that pass the
    filters of ``search``, in its order, after the sequence number ``cursor`` (before it,
    newest first), at most ``size`` of them."""

    search: HistorySearch
    tokens: Sequence[int]
    cursor: int | None
    size: int


class PlaintextSealer(Protocol):
    """What the migration of a database from before encryption at rest seals rows with."""

    def seal_note(self, account_id: str, session_id: str, path: str, text: str) -> bytes: ...

    def seal_item(
        self, account_id: str, session_id: str, agent: str, item: RecordedItem
    ) -> SealedItem: ...


def _images_of_column(value: object) -> tuple[RecordedImage, ...]:
    """The images a plaintext ``images`` column (of a database from before encryption at
    rest) holds: none for ``NULL``."""
    if not isinstance(value, str):
        return ()
    return tuple(
        RecordedImage(image["data"], image["mime_type"], image.get("detail"))
        for image in codec.loads(value)
    )


#: Rows sealed per transaction when a database from before encryption at rest is migrated.
SEAL_BATCH = 500
#: The next batch of plaintext note writes, as :func:`seal_plaintext_note` takes them.
PLAINTEXT_NOTES = (
    "SELECT seq, account_id, session_id, path, text FROM note_events "
    f"WHERE sealed IS NULL ORDER BY seq LIMIT {SEAL_BATCH}"
)
#: The next batch of plaintext items, as :func:`seal_plaintext_item` takes them.
PLAINTEXT_ITEMS = (
    "SELECT seq, account_id, session_id, agent, window_id, item_key, role, content, "
    "tool_name, tool_namespace, images FROM history_items "
    f"WHERE sealed IS NULL ORDER BY seq LIMIT {SEAL_BATCH}"
)


def seal_plaintext_note(sealer: PlaintextSealer, row: Sequence[Any]) -> tuple[bytes, int]:
    """The sealed value of a :data:`PLAINTEXT_NOTES` row, and its sequence number."""
    seq, account_id, session_id, path, text = row
    return sealer.seal_note(account_id, session_id, path, text), int(seq)


def seal_plaintext_item(sealer: PlaintextSealer, row: Sequence[Any]) -> tuple[SealedItem, int]:
    """The sealed item of a :data:`PLAINTEXT_ITEMS` row, and its sequence number."""
    seq, account_id, session_id, agent, window_id, item_key, role, content = row[:8]
    tool_name, tool_namespace, images = row[8:]
    item = RecordedItem(
        window_id, item_key, role, content, tool_name, tool_namespace, _images_of_column(images)
    )
    return sealer.seal_item(account_id, session_id, agent, item), int(seq)


#: The columns of a stored item that :func:`sealed_item` reads, in its order.
SEALED_ITEM_COLUMNS = "window_id, item_key, role, tool_name, tool_namespace, sealed"


def sealed_item(row: Sequence[Any]) -> SealedItem:
    window_id, item_key, role, tool_name, tool_namespace, sealed = row
    return SealedItem(window_id, item_key, role, tool_name, tool_namespace, bytes(sealed))


class Storage(Protocol):
    """Accounts, tokens, wrapped account keys, and sealed notes and history, per account."""

    def create_account(self, account_id: str, name: str) -> Account:
        """:raises AccountExistsError: the name is taken."""
        ...

    def account_by_name(self, name: str) -> Account | None: ...

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None: ...

    def account_for_token(self, token_hash: str) -> Account | None: ...

    def list_tokens(self) -> list[IssuedTokenRecord]:
        """Every token, oldest first."""
        ...

    def revoke_token(self, token_id: str) -> int:
        """Delete the tokens whose hash starts with ``token_id`` (hex); returns how many."""
        ...

    def revoke_account_tokens(self, account_id: str) -> int:
        """Delete every token of the account; returns how many."""
        ...

    def account_key(self, account_id: str) -> str | None:
        """The account's wrapped storage secret, ``None`` before it stored anything."""
        ...

    def add_account_key(self, account_id: str, wrapped: str) -> str:
        """Keep ``wrapped`` unless the account has a key already; returns the one kept (of
        processes racing to make the first, one wins and all use it)."""
        ...

    def account_keys(self) -> list[tuple[str, str]]:
        """Every account's wrapped storage secret."""
        ...

    def replace_account_key(self, account_id: str, old: str, new: str) -> None:
        """Store ``new`` if the account's key is still ``old`` (re-wrapping races are
        harmless: either wrapping opens the same secret)."""
        ...

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]:
        """The session's note writes with a sequence number above ``after``, oldest first."""
        ...

    def append_note_event(self, account_id: str, session_id: str, note: SealedNote) -> int:
        """Persist one note write durably; returns its sequence number."""
        ...

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, SealedItem]]:
        """The agent's recorded items with a sequence number above ``after``, in arrival
        order."""
        ...

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[SealedItem]
    ) -> list[bool]:
        """Persist items and their tokens durably, in order, in one transaction; an item
        already recorded (same window and key) is left as it is. Returns, per item, whether
        it was new."""
        ...

    def search_candidates(
        self, account_id: str, session_id: str, agent: str, page: CandidatePage
    ) -> list[tuple[int, SealedItem]]:
        """One page of the agent's items that may match, found through the blind index."""
        ...

    def seal_plaintext(self, sealer: PlaintextSealer) -> None:
        """Seal every row a database from before encryption at rest still holds in
        plaintext, then drop the plaintext columns: batch by batch, so an interrupted run
        resumes where it stopped, and safe from several processes at once."""
        ...

    def ping(self) -> None:
        """A trivial round trip; raises :class:`StorageUnavailableError` when it fails."""
        ...

    def close(self) -> None: ...


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
CREATE TABLE IF NOT EXISTS account_keys (
    account_id TEXT PRIMARY KEY,
    wrapped TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS note_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    action TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    sealed BLOB
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
    tool_name TEXT,
    tool_namespace TEXT,
    sealed BLOB,
    UNIQUE (account_id, session_id, agent, window_id, item_key)
);
CREATE INDEX IF NOT EXISTS history_items_agent
    ON history_items (account_id, session_id, agent, seq);
CREATE TABLE IF NOT EXISTS history_tokens (
    token INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (token, seq)
) WITHOUT ROWID;
"""

DATABASE_NAME = "ctxmodes-serve.sqlite3"

#: The plaintext columns of files from before encryption at rest, per table.
_PLAINTEXT_COLUMNS = {"note_events": ("path", "text"), "history_items": ("content", "images")}


class SqliteStorage:
    """:class:`Storage` in one SQLite file. Not thread-safe: one thread uses it at a time.

    Several processes may share the file (SQLite locks it; a writer waits up to
    ``busy_timeout_ms`` for another). ``secure_delete`` is on, so space a row frees is
    zeroed rather than left holding what it held.
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
            self._db.execute("PRAGMA secure_delete=ON")
            self._db.executescript(_SCHEMA)
            self._add_sealed_columns()
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

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}

    def _write_transaction(self, work: Callable[[], _T]) -> _T:
        """``work`` in one ``BEGIN IMMEDIATE`` transaction: all of it on disk, or none."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work()
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None
        return result

    # -- migrating files from before encryption at rest ------------------------------------

    def _add_sealed_columns(self) -> None:
        """Files from before encryption at rest lack ``sealed`` (and the oldest, the
        ``images`` column): add them, checked under the write lock so two processes opening
        an old file at once add each once."""

        def add() -> None:
            for table in ("note_events", "history_items"):
                columns = self._columns(table)
                if "sealed" not in columns:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN sealed BLOB")
                if table == "history_items" and "content" in columns and "images" not in columns:
                    self._db.execute("ALTER TABLE history_items ADD COLUMN images TEXT")

        self._write_transaction(add)

    def seal_plaintext(self, sealer: PlaintextSealer) -> None:
        dropped = False
        while True:
            progress = self._write_transaction(lambda: self._seal_batch(sealer))
            if progress is None:
                break
            dropped = dropped or progress
        if dropped:
            # Nothing of the plaintext may stay in free pages or in the journal.
            self._execute("VACUUM")
            self._execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _seal_batch(self, sealer: PlaintextSealer) -> bool | None:
        """Seal one batch of plaintext rows, or drop the plaintext columns when none is left
        (``True``); ``None`` when there is nothing left to do."""
        notes = "path" in self._columns("note_events")
        items = "content" in self._columns("history_items")
        if notes:
            rows = self._db.execute(PLAINTEXT_NOTES).fetchall()
            for row in rows:
                self._db.execute(
                    "UPDATE note_events SET sealed = ?, path = '', text = '' WHERE seq = ?",
                    seal_plaintext_note(sealer, row),
                )
            if rows:
                return False
        if items:
            rows = self._db.execute(PLAINTEXT_ITEMS).fetchall()
            for row in rows:
                stored, seq = seal_plaintext_item(sealer, row)
                self._db.execute(
                    "UPDATE history_items SET sealed = ?, content = '', images = NULL "
                    "WHERE seq = ?",
                    (stored.sealed, seq),
                )
                self._add_tokens(seq, stored.tokens)
            if rows:
                return False
        if not (notes or items):
            return None
        for table, columns in _PLAINTEXT_COLUMNS.items():
            for column in columns:
                if column in self._columns(table):
                    self._db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        return True

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

    def list_tokens(self) -> list[IssuedTokenRecord]:
        rows = self._execute(
            f"SELECT substr(token_hash, 1, {TOKEN_ID_DIGITS}), accounts.account_id, "
            "accounts.name, created_at FROM tokens "
            "JOIN accounts ON accounts.account_id = tokens.account_id "
            "ORDER BY created_at, token_hash"
        )
        return [IssuedTokenRecord(row[0], Account(row[1], row[2]), row[3]) for row in rows]

    def revoke_token(self, token_id: str) -> int:
        cursor = self._execute(
            "DELETE FROM tokens WHERE substr(token_hash, 1, ?) = ?", (len(token_id), token_id)
        )
        return cursor.rowcount

    def revoke_account_tokens(self, account_id: str) -> int:
        return self._execute("DELETE FROM tokens WHERE account_id = ?", (account_id,)).rowcount

    # -- account keys ---------------------------------------------------------------------

    def account_key(self, account_id: str) -> str | None:
        row = self._execute(
            "SELECT wrapped FROM account_keys WHERE account_id = ?", (account_id,)
        ).fetchone()
        return str(row[0]) if row else None

    def add_account_key(self, account_id: str, wrapped: str) -> str:
        self._execute(
            "INSERT OR IGNORE INTO account_keys (account_id, wrapped) VALUES (?, ?)",
            (account_id, wrapped),
        )
        kept = self.account_key(account_id)
        assert kept is not None
        return kept

    def account_keys(self) -> list[tuple[str, str]]:
        rows = self._execute("SELECT account_id, wrapped FROM account_keys ORDER BY account_id")
        return [(str(row[0]), str(row[1])) for row in rows]

    def replace_account_key(self, account_id: str, old: str, new: str) -> None:
        self._execute(
            "UPDATE account_keys SET wrapped = ? WHERE account_id = ? AND wrapped = ?",
            (new, account_id, old),
        )

    # -- notes ----------------------------------------------------------------------------

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]:
        rows = self._execute(
            "SELECT seq, action, timestamp, sealed FROM note_events "
            "WHERE account_id = ? AND session_id = ? AND seq > ? ORDER BY seq",
            (account_id, session_id, after),
        )
        return [(row[0], SealedNote(row[1], row[2], bytes(row[3]))) for row in rows]

    def append_note_event(self, account_id: str, session_id: str, note: SealedNote) -> int:
        cursor = self._execute(
            "INSERT INTO note_events (account_id, session_id, action, timestamp, sealed) "
            "VALUES (?, ?, ?, ?, ?)",
            (account_id, session_id, note.action, note.timestamp, note.sealed),
        )
        return int(cursor.lastrowid or 0)

    # -- history --------------------------------------------------------------------------

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, SealedItem]]:
        rows = self._execute(
            f"SELECT seq, {SEALED_ITEM_COLUMNS} "
            "FROM history_items WHERE account_id = ? AND session_id = ? AND agent = ? "
            "AND seq > ? ORDER BY seq",
            (account_id, session_id, agent, after),
        )
        return [(row[0], sealed_item(row[1:])) for row in rows]

    def _add_tokens(self, seq: int, tokens: Sequence[int]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO history_tokens (token, seq) VALUES (?, ?)",
            [(token, seq) for token in tokens],
        )

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[SealedItem]
    ) -> list[bool]:
        if not items:
            return []

        def insert() -> list[bool]:
            new: list[bool] = []
            for item in items:
                cursor = self._db.execute(
                    "INSERT OR IGNORE INTO history_items (account_id, session_id, agent, "
                    "window_id, item_key, role, tool_name, tool_namespace, sealed) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        account_id,
                        session_id,
                        agent,
                        item.window_id,
                        item.item_key,
                        item.role,
                        item.tool_name,
                        item.tool_namespace,
                        item.sealed,
                    ),
                )
                new.append(cursor.rowcount == 1)
                if cursor.rowcount == 1 and cursor.lastrowid is not None:
                    self._add_tokens(cursor.lastrowid, item.tokens)
            return new

        # One transaction for the whole exchange: one sync, all or nothing.
        return self._write_transaction(insert)

    def search_candidates(
        self, account_id: str, session_id: str, agent: str, page: CandidatePage
    ) -> list[tuple[int, SealedItem]]:
        search = page.search
        # Past the cursor only: every range below reads from where the last page stopped.
        after = (
            ""
            if page.cursor is None
            else (" AND seq < ?" if search.newest_first else " AND seq > ?")
        )
        bound = [] if page.cursor is None else [page.cursor]
        # The rows holding every token: an intersection of ranges of the token index.
        holding = " INTERSECT ".join(
            f"SELECT seq FROM history_tokens WHERE token = ?{after}" for _ in page.tokens
        )
        clauses = ["account_id = ?", "session_id = ?", "agent = ?", f"seq IN ({holding})"]
        params: list[object] = [account_id, session_id, agent]
        for token in page.tokens:
            params += [token, *bound]
        for column, value in search.filters():
            clauses.append(f"{column} = ?")
            params.append(value)
        order = "DESC" if search.newest_first else "ASC"
        rows = self._execute(
            f"SELECT seq, {SEALED_ITEM_COLUMNS} FROM history_items "
            f"WHERE {' AND '.join(clauses)} ORDER BY seq {order} LIMIT {int(page.size)}",
            params,
        )
        return [(row[0], sealed_item(row[1:])) for row in rows]


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
