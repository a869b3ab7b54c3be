""":class:`~ctxmodes_remote.service.storage.Storage` in one SQLite file: WAL journal,
``synchronous=FULL`` (a write method returns only once its transaction is on disk, so an
acknowledged note survives a crash), owner-only, and ``secure_delete`` on. Several processes
may share the file. ``serve backup`` copies it with SQLite's online backup.

The service groups commits (:meth:`SqliteStorage.group_commits`): the writes of the calls its
worker runs one after another join one transaction, under a savepoint each (a write of one
statement needs none), and :meth:`SqliteStorage.commit_group` puts them on disk with one sync
before any of those calls is answered. The file's commit rate, not its write rate, is what
bounds a SQLite service.

A history search's pages after its first are read on read-only connections of their own, on
threads of their own, while the worker serves other calls (see :class:`_Reader`). Note reads
run on the event loop, on a read-only connection of their own (:class:`SqliteLoopReads`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ctxmodes_remote.service.sealing import token_words
from ctxmodes_remote.service.storage import (
    PLAINTEXT_ITEMS,
    PLAINTEXT_NOTES,
    SEAL_BATCH,
    SEALED_ITEM_COLUMNS,
    TOKEN_ID_DIGITS,
    Account,
    AccountExistsError,
    CandidatePage,
    IssuedTokenRecord,
    SealedItem,
    SealedNote,
    Sealer,
    StorageUnavailableError,
    seal_plaintext_item,
    seal_plaintext_note,
    sealed_item,
)
from ctxmodes_remote.service.workers import wait_serving

_T = TypeVar("_T")

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
"""
#: The blind index: each item's tokens as opaque words of a contentless FTS5 table (rowid =
#: the item's seq), which keeps compact posting lists, never the rows' text.
_TOKEN_INDEX = """
CREATE VIRTUAL TABLE IF NOT EXISTS history_tokens USING fts5(
    tokens, content='', detail=none, columnsize=0
)
"""

DATABASE_NAME = "ctxmodes-serve.sqlite3"
#: Read-only connections (each on a thread of its own) that run searches' candidate queries.
READER_THREADS = 4

#: The plaintext columns of files from before encryption at rest, per table.
_PLAINTEXT_COLUMNS = {"note_events": ("path", "text"), "history_items": ("content", "images")}


class SqliteStorage:
    """:class:`Storage` in one SQLite file. Not thread-safe: one thread uses it at a time.

    Several processes may share the file (SQLite locks it; a writer waits up to
    ``busy_timeout_ms`` for another). ``secure_delete`` is on, so space a row frees is
    zeroed rather than left holding what it held.
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 10_000) -> None:
        self._grouping = False
        self._group_lost = False
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
            if (
                self._db.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'history_tokens'"
                ).fetchone()
                is None
            ):
                self._db.execute(_TOKEN_INDEX)
            self._add_sealed_columns()
        except (OSError, sqlite3.Error) as exc:
            raise StorageUnavailableError(f"cannot open the database {path}: {exc}") from None
        self._reader = _Reader(path, busy_timeout_ms)
        self._loop_reads = SqliteLoopReads(path)

    @classmethod
    def in_directory(cls, directory: Path) -> SqliteStorage:
        return cls(directory / DATABASE_NAME)

    def close(self) -> None:
        self._reader.close()
        self._loop_reads.close_now()
        self._db.close()

    def ping(self) -> None:
        self._execute("SELECT 1").fetchone()

    @property
    def workers(self) -> int:
        # One connection, one transaction at a time.
        return 1

    @property
    def search_page_max(self) -> int:
        # A query runs on the worker thread every session shares and cannot give way
        # midway: small pages keep each one short, and a query costs little here.
        return 200

    def data_version(self) -> int | None:
        return int(self._execute("PRAGMA data_version").fetchone()[0])

    def _execute(self, query: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(query, params)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}

    def loop_notes(self) -> SqliteLoopReads:
        # Writes stay on the worker, which group-commits them on its one connection.
        return self._loop_reads

    # -- group commit ------------------------------------------------------------------------

    def group_commits(self) -> bool:
        """From now on, writes join one open transaction until :meth:`commit_group`: their
        caller answers none of them before that commit, and one sync covers them all."""
        self._grouping = True
        return True

    @property
    def uncommitted(self) -> bool:
        """Whether writes (or a failed group) wait for :meth:`commit_group`."""
        return self._db.in_transaction or self._group_lost

    def commit_group(self) -> None:
        """Commit the writes made since the last commit.

        :raises StorageUnavailableError: they are not on disk (none of them: a failure
            rolls the whole group back).
        """
        lost, self._group_lost = self._group_lost, False
        try:
            if lost:
                raise sqlite3.OperationalError("a write of the group failed with the database")
            if self._db.in_transaction:
                self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise StorageUnavailableError(f"the database failed: {exc}") from None

    def _grouped_write(self, work: Callable[[], _T], statements: int | None = None) -> _T:
        """``work`` in the open group (opened first if need be), under a savepoint: a write
        that fails leaves the writes before it in the group as they were. ``work`` of one
        statement needs none: SQLite undoes a failed statement by itself."""
        if self._group_lost:
            raise StorageUnavailableError("the database failed earlier in this group")
        savepoint = statements != 1
        try:
            if not self._db.in_transaction:
                self._db.execute("BEGIN IMMEDIATE")
            if savepoint:
                self._db.execute("SAVEPOINT write")
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None
        try:
            result = work()
        except BaseException as failure:
            try:
                if savepoint:
                    self._db.execute("ROLLBACK TO write")
                    self._db.execute("RELEASE write")
            except sqlite3.Error:
                # SQLite rolled the whole transaction back itself (a full disk, an I/O
                # error): the writes before this one are gone too.
                self._group_lost = True
            if not self._db.in_transaction:
                self._group_lost = True
            if isinstance(failure, sqlite3.Error) and not isinstance(
                failure, sqlite3.IntegrityError
            ):
                raise StorageUnavailableError(f"the database failed: {failure}") from None
            raise
        try:
            if savepoint:
                self._db.execute("RELEASE write")
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None
        return result

    def _write_transaction(self, work: Callable[[], _T], statements: int | None = None) -> _T:
        """``work`` in one ``BEGIN IMMEDIATE`` transaction: all of it on disk, or none (or,
        when commits are grouped, in the group). ``statements``: how many ``work`` runs,
        when known."""
        if self._grouping:
            return self._grouped_write(work, statements)
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

    def upgrade(self, sealer: Sealer) -> None:
        self._seal_plaintext(sealer)
        self._write_transaction(lambda: self._rebuild_index(sealer))

    def _rebuild_index(self, sealer: Sealer) -> None:
        """Replace a token table of an earlier tokenisation (a plain table, not FTS5) with
        the current index of every item."""
        row = self._db.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'history_tokens'"
        ).fetchone()
        if row is not None and "fts5" in str(row[0]).lower():
            return
        self._db.execute("DROP TABLE IF EXISTS history_tokens")
        self._db.execute(_TOKEN_INDEX)
        last = 0
        while True:
            rows = self._db.execute(
                f"SELECT seq, account_id, session_id, agent, {SEALED_ITEM_COLUMNS} "
                f"FROM history_items WHERE seq > ? ORDER BY seq LIMIT {SEAL_BATCH}",
                (last,),
            ).fetchall()
            if not rows:
                return
            for seq, account_id, session_id, agent, *stored in rows:
                tokens = sealer.item_tokens(account_id, session_id, agent, sealed_item(stored))
                self._add_tokens(seq, tokens)
            last = rows[-1][0]

    def _seal_plaintext(self, sealer: Sealer) -> None:
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

    def _seal_batch(self, sealer: Sealer) -> bool | None:
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
        row = self._execute(_ACCOUNT_KEY, (account_id,)).fetchone()
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
        return _sealed_notes(self._execute(_NOTE_EVENTS, (account_id, session_id, after)))

    def append_note_event(
        self, account_id: str, session_id: str, note: SealedNote, after: int
    ) -> int | None:
        def insert() -> int | None:
            cursor = self._db.execute(
                _APPEND_NOTE,
                (
                    account_id,
                    session_id,
                    note.action,
                    note.timestamp,
                    note.sealed,
                    account_id,
                    session_id,
                    after,
                ),
            )
            return int(cursor.lastrowid or 0) if cursor.rowcount == 1 else None

        # The check and the write in one statement under the write lock: no other process
        # writes in between.
        return self._write_transaction(insert, statements=1)

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

    def _add_tokens(self, seq: int, tokens: bytes) -> None:
        self._db.execute(
            "INSERT INTO history_tokens (rowid, tokens) VALUES (?, ?)",
            (seq, " ".join(token_words(tokens))),
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
        # Every token must be there (FTS5 joins quoted words with AND); from the cursor on.
        match = " ".join(f'"{word}"' for word in token_words(page.tokens))
        after = ""
        params: list[object] = [match]
        if page.cursor is not None:
            after = " AND rowid < ?" if search.newest_first else " AND rowid > ?"
            params.append(page.cursor)
        holding = f"SELECT rowid FROM history_tokens WHERE history_tokens MATCH ?{after}"
        clauses = [f"seq IN ({holding})", "account_id = ?", "session_id = ?", "agent = ?"]
        params += [account_id, session_id, agent]
        for column, value in search.filters():
            clauses.append(f"{column} = ?")
            params.append(value)
        order = "DESC" if search.newest_first else "ASC"
        query = (
            f"SELECT seq, {SEALED_ITEM_COLUMNS} FROM history_items "
            f"WHERE {' AND '.join(clauses)} ORDER BY seq {order} LIMIT {int(page.size)}"
        )
        if self.uncommitted or page.cursor is None:
            # Only this connection sees the writes of its open transaction. And a search's
            # first page is read here: most searches need no other, and one that waited for
            # a reader would have the worker run other calls meanwhile, a long one among
            # them perhaps, which it could not resume before that one ended.
            rows = self._execute(query, params).fetchall()
        else:
            rows = self._reader.fetch(query, params)
        return [(row[0], sealed_item(row[1:])) for row in rows]


#: A session's note writes after a sequence number, oldest first.
_NOTE_EVENTS = (
    "SELECT seq, action, timestamp, sealed FROM note_events "
    "WHERE account_id = ? AND session_id = ? AND seq > ? ORDER BY seq"
)
_ACCOUNT_KEY = "SELECT wrapped FROM account_keys WHERE account_id = ?"
#: How long a read on the event loop waits for a lock: a reader of a WAL file meets one only
#: in rare moments (another connection recovering the file), and the loop must not stall.
LOOP_BUSY_TIMEOUT_MS = 100


def _sealed_notes(rows: Iterable[Sequence[Any]]) -> list[tuple[int, SealedNote]]:
    return [(row[0], SealedNote(row[1], row[2], bytes(row[3]))) for row in rows]


def _read_only(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    db = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro",
        uri=True,
        isolation_level=None,
        check_same_thread=False,
    )
    db.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    return db


class SqliteLoopReads:
    """Note reads on the event loop, on a read-only connection of its own (opened on first
    use): no trip to the worker and back, which costs a note read more CPU than the read
    itself. The connection sees what is committed (a WAL snapshot per statement); the
    engine reads it inside the session's turn, when none of this process's writes to the
    session is still uncommitted, so what it answers is what storage holds."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        db = self._db
        if db is None:
            db = self._db = _read_only(self._path, LOOP_BUSY_TIMEOUT_MS)
        return db

    def _fetch(self, query: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._connection().execute(query, params).fetchall()
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None

    async def data_version(self) -> int:
        return int(self._fetch("PRAGMA data_version")[0][0])

    async def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]:
        return _sealed_notes(self._fetch(_NOTE_EVENTS, (account_id, session_id, after)))

    async def account_key(self, account_id: str) -> str | None:
        rows = self._fetch(_ACCOUNT_KEY, (account_id,))
        return str(rows[0][0]) if rows else None

    async def ping(self) -> None:
        self._fetch("SELECT 1")

    async def close(self) -> None:
        self.close_now()

    def close_now(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


#: One note write, if no write of its session came after ``after`` (so a write checked
#: against notes another process has since changed is refused): one statement.
_APPEND_NOTE = (
    "INSERT INTO note_events (account_id, session_id, action, timestamp, sealed) "
    "SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM note_events "
    "WHERE account_id = ? AND session_id = ? AND seq > ?)"
)


class _Reader:
    """Read-only connections to the file on threads of their own, for the queries that
    take long (a search's candidates): the worker thread that asked serves other accounts'
    calls meanwhile, and SQLite leaves the interpreter to the others while it runs. They
    see what is committed, so they are asked only while the main connection has nothing
    uncommitted. There are a few, so one account's long query never holds up another's."""

    def __init__(self, path: Path, busy_timeout_ms: int, threads: int = READER_THREADS) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix="ctxmodes-sqlite-reader")

    def fetch(self, query: str, params: Sequence[object]) -> list[tuple[object, ...]]:
        """:raises StorageUnavailableError: the query failed."""
        return wait_serving(self._threads.submit(self._fetch, query, params))

    def _fetch(self, query: str, params: Sequence[object]) -> list[tuple[object, ...]]:
        try:
            db: sqlite3.Connection | None = getattr(self._local, "db", None)
            if db is None:
                db = self._local.db = _read_only(self._path, self._busy_timeout_ms)
                with self._lock:
                    self._opened.append(db)
            return db.execute(query, params).fetchall()
        except sqlite3.Error as exc:
            raise StorageUnavailableError(f"the database failed: {exc}") from None

    def close(self) -> None:
        self._threads.shutdown(wait=True, cancel_futures=True)
        for db in self._opened:
            db.close()


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
