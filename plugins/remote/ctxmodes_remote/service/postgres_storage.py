""":class:`~ctxmodes_remote.service.storage.Storage` in Postgres, for several service
processes on several machines sharing one database (psycopg 3, a connection pool).

The schema is created and migrated by the service itself: numbered migrations, each applied
once inside a transaction that holds an advisory lock, so running them twice, or from
several processes starting at once, is safe. A database from before encryption at rest is
sealed in place after them (:meth:`PostgresStorage.upgrade`), batch by batch under
the same lock; the plaintext columns are dropped, and their tables rewritten (``VACUUM
FULL``) so the files keep none of it, once no row is left to seal.

Every statement commits before it returns
(Postgres' default ``synchronous_commit``), so an acknowledged write is durable. The pool
lends connections without a round trip to check them first (that check alone halved the
statement rate); a statement that finds its connection lost has the pool check its idle
connections and replace the dead ones, and is tried once more on a fresh connection when it
only reads. So the service recovers by itself when Postgres restarts; a write that meets the
outage fails with :class:`StorageUnavailableError` (it may or may not have committed, as any
write whose answer is lost).

Note reads and writes, the service's most frequent calls, also run on the event loop
(:class:`PostgresLoopNotes`, psycopg's asyncio connections in a pool of their own, with the
same statements and the same recovery), so they take no trip to a worker thread. Note
writes made while another is under way go to the database together, as one statement that
commits them all, and so do the reads of what is new in a session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg.pq import ExecStatus, TransactionStatus
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from ctxmodes_remote.service.batches import StatementBatches
from ctxmodes_remote.service.sealing import token_array
from ctxmodes_remote.service.storage import (
    DEFAULT_CONNECTIONS,
    PLAINTEXT_ITEMS,
    PLAINTEXT_NOTES,
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

_T = TypeVar("_T")

#: First key of the lock that orders history appends to one agent of one session (the second
#: is a hash of the three names).
HISTORY_LOCK = 0x68697374


def history_lock_scope(account_id: str, session_id: str, agent: str) -> str:
    """What :data:`HISTORY_LOCK`'s second key hashes (``hashtext``)."""
    return f"{account_id}/{session_id}/{agent}"


#: ``pg_advisory_xact_lock`` key of the migrations (any constant shared by all processes).
_MIGRATION_LOCK = 0x637478_6D6F6465

MIGRATIONS: tuple[tuple[int, str], ...] = (
    (
        1,
        """
        CREATE TABLE accounts (
            account_id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        );
        CREATE TABLE tokens (
            token_hash TEXT PRIMARY KEY,
            account_id TEXT NOT NULL REFERENCES accounts (account_id),
            created_at BIGINT NOT NULL
        );
        CREATE TABLE note_events (
            seq BIGSERIAL PRIMARY KEY,
            account_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            action TEXT NOT NULL,
            path TEXT NOT NULL,
            text TEXT NOT NULL,
            timestamp BIGINT NOT NULL
        );
        CREATE INDEX note_events_session ON note_events (account_id, session_id, seq);
        CREATE TABLE history_items (
            seq BIGSERIAL PRIMARY KEY,
            account_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            agent TEXT NOT NULL,
            window_id TEXT NOT NULL,
            item_key TEXT NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            tool_name TEXT,
            tool_namespace TEXT,
            UNIQUE (account_id, session_id, agent, window_id, item_key)
        );
        CREATE INDEX history_items_agent ON history_items (account_id, session_id, agent, seq);
        """,
    ),
    (
        2,
        # Was the trigram index of the plaintext history (pg_trgm); encryption at rest
        # replaced it with the blind index (4), which drops it where it was made.
        "SELECT 1;",
    ),
    (
        3,
        # The images of recorded items (JSON, NULL for none), for history.read_item.
        "ALTER TABLE history_items ADD COLUMN IF NOT EXISTS images TEXT;",
    ),
    (
        4,
        # Encryption at rest: sealed values, wrapped account keys, and the blind index (a
        # GIN index over each item's tokens) in place of the trigram index of the text.
        # The plaintext columns stay, empty by default, until every row is sealed.
        """
        CREATE TABLE account_keys (
            account_id TEXT PRIMARY KEY,
            wrapped TEXT NOT NULL
        );
        ALTER TABLE note_events ADD COLUMN sealed BYTEA,
            ALTER COLUMN path SET DEFAULT '', ALTER COLUMN text SET DEFAULT '';
        ALTER TABLE history_items ADD COLUMN sealed BYTEA,
            ADD COLUMN tokens INTEGER[] NOT NULL DEFAULT '{}',
            ALTER COLUMN content SET DEFAULT '';
        DROP INDEX IF EXISTS history_items_content_trgm;
        CREATE INDEX history_items_tokens ON history_items USING gin (tokens);
        """,
    ),
    (
        6,
        # Each note write names the write it follows (``after_seq``, 0 for a session's first):
        # one per predecessor, so of two writes made against the same notes the second finds
        # the first's row in the unique index and is refused, in the statement that inserts
        # it (no lock, no transaction around it). Existing writes follow their session's
        # previous one. A process of an earlier version, which leaves the column out, has
        # its note writes refused rather than let them bypass the check.
        """
        ALTER TABLE note_events ADD COLUMN after_seq BIGINT;
        UPDATE note_events SET after_seq = chain.previous
            FROM (SELECT seq, coalesce(lag(seq) OVER (
                PARTITION BY account_id, session_id ORDER BY seq), 0) AS previous
                FROM note_events) AS chain
            WHERE note_events.seq = chain.seq;
        ALTER TABLE note_events ALTER COLUMN after_seq SET NOT NULL;
        CREATE UNIQUE INDEX note_events_chain ON note_events (account_id, session_id, after_seq);
        """,
    ),
)
#: The version recording that the plaintext columns are gone (applied by the sealing).
PLAINTEXT_DROPPED = 5
_DROP_PLAINTEXT = """
ALTER TABLE note_events DROP COLUMN path, DROP COLUMN text;
ALTER TABLE history_items DROP COLUMN content, DROP COLUMN images;
"""


def migrate(connection: psycopg.Connection) -> list[int]:
    """Apply the migrations this database lacks; returns the versions applied now."""
    applied_now: list[int] = []
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in connection.execute("SELECT version FROM schema_migrations")}
        for version, statements in MIGRATIONS:
            if version in done:
                continue
            connection.execute(statements)
            connection.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
            applied_now.append(version)
    return applied_now


#: The columns a history search chooses its candidates by (see
#: :meth:`PostgresStorage.search_candidates`).
_CHOOSING_COLUMNS = "account_id, session_id, agent, window_id, role, tool_name, tool_namespace"


class PostgresStorage:
    """The storage interface over a Postgres database named by a ``postgresql://`` URL."""

    def __init__(
        self, url: str, *, max_connections: int = DEFAULT_CONNECTIONS, timeout_s: float = 5.0
    ) -> None:
        self._max_connections = max_connections
        self._loop_notes = PostgresLoopNotes(url, max_connections, timeout_s)
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=timeout_s,
            kwargs={"autocommit": True},
            open=False,
        )
        try:
            # Migrate over a connection of its own first: a database that cannot be reached
            # fails here at once, not after the pool's wait.
            with psycopg.connect(url, autocommit=True, connect_timeout=int(timeout_s)) as first:
                try:
                    migrate(first)
                except psycopg.errors.InsufficientPrivilege as exc:
                    raise StorageUnavailableError(_not_permitted(first, exc)) from None
            self._pool.open(wait=True, timeout=timeout_s)
        except (psycopg.Error, OSError, TimeoutError) as exc:
            self._pool.close()
            raise StorageUnavailableError(f"cannot use the database: {_reason(exc)}") from None

    def close(self) -> None:
        self._pool.close()

    def loop_notes(self) -> PostgresLoopNotes:
        return self._loop_notes

    def ping(self) -> None:
        self._read("SELECT 1", ())

    @property
    def workers(self) -> int:
        # One thread per connection the pool may open.
        return self._max_connections

    @property
    def search_page_max(self) -> int:
        # Each query finds the candidates anew (a GIN index scan) and the server does it,
        # not the worker: fewer, bigger pages.
        return 6400

    def group_commits(self) -> bool:
        # Each connection commits on its own; Postgres shares a sync among those that
        # commit together.
        return False

    @property
    def uncommitted(self) -> bool:
        return False

    def commit_group(self) -> None:
        pass

    def data_version(self) -> int | None:
        # Postgres cannot say without a round trip: readers ask what is new.
        return None

    def _use(self, work: Callable[[psycopg.Connection], _T], *, reads_only: bool = False) -> _T:
        """``work`` on a pooled connection. A lost connection makes the pool check its idle
        ones (a restarted server leaves them all dead); ``work`` that only reads is then
        tried once more.

        :raises StorageUnavailableError: the database failed (a unique violation is raised
            as it is).
        """
        for attempt in (1, 2):
            lost = False
            try:
                with self._pool.connection() as connection:
                    try:
                        return work(connection)
                    except psycopg.OperationalError:
                        lost = connection.broken
                        raise
            except psycopg.errors.UniqueViolation:
                raise
            except (psycopg.Error, OSError, TimeoutError) as exc:
                if lost:
                    self._pool.check()
                if not (lost and reads_only and attempt == 1):
                    raise StorageUnavailableError(f"the database failed: {_reason(exc)}") from None
        raise AssertionError("unreachable")

    def _transaction(
        self, work: Callable[[psycopg.Connection], _T], *, reads_only: bool = False
    ) -> _T:
        def in_transaction(connection: psycopg.Connection) -> _T:
            with connection.transaction():
                return work(connection)

        return self._use(in_transaction, reads_only=reads_only)

    def _run(
        self, query: str, params: Sequence[object], *, reads_only: bool = False
    ) -> list[tuple[Any, ...]]:
        def run(connection: psycopg.Connection) -> list[tuple[Any, ...]]:
            cursor = connection.execute(query, params)
            # The result's status, not ``description``: that builds a column object per
            # column on every statement.
            result = cursor.pgresult
            returned = result is not None and result.status == ExecStatus.TUPLES_OK
            return list(cursor.fetchall()) if returned else []

        return self._use(run, reads_only=reads_only)

    def _read(self, query: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self._run(query, params, reads_only=True)

    # -- accounts and tokens --------------------------------------------------------------

    def create_account(self, account_id: str, name: str) -> Account:
        try:
            self._run("INSERT INTO accounts (account_id, name) VALUES (%s, %s)", (account_id, name))
        except psycopg.errors.UniqueViolation:
            raise AccountExistsError(f"an account named {name!r} exists already") from None
        return Account(account_id, name)

    def account_by_name(self, name: str) -> Account | None:
        rows = self._read("SELECT account_id, name FROM accounts WHERE name = %s", (name,))
        return Account(str(rows[0][0]), str(rows[0][1])) if rows else None

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None:
        self._run(
            "INSERT INTO tokens (token_hash, account_id, created_at) VALUES (%s, %s, %s)",
            (token_hash, account_id, created_at),
        )

    def account_for_token(self, token_hash: str) -> Account | None:
        rows = self._read(
            "SELECT accounts.account_id, accounts.name FROM tokens "
            "JOIN accounts ON accounts.account_id = tokens.account_id "
            "WHERE tokens.token_hash = %s",
            (token_hash,),
        )
        return Account(str(rows[0][0]), str(rows[0][1])) if rows else None

    def list_tokens(self) -> list[IssuedTokenRecord]:
        rows = self._read(
            f"SELECT left(token_hash, {TOKEN_ID_DIGITS}), accounts.account_id, accounts.name, "
            "created_at FROM tokens JOIN accounts ON accounts.account_id = tokens.account_id "
            "ORDER BY created_at, token_hash",
            (),
        )
        return [
            IssuedTokenRecord(str(row[0]), Account(str(row[1]), str(row[2])), int(row[3]))
            for row in rows
        ]

    def revoke_token(self, token_id: str) -> int:
        rows = self._run(
            "DELETE FROM tokens WHERE left(token_hash, %s) = %s RETURNING 1",
            (len(token_id), token_id),
        )
        return len(rows)

    def revoke_account_tokens(self, account_id: str) -> int:
        rows = self._run("DELETE FROM tokens WHERE account_id = %s RETURNING 1", (account_id,))
        return len(rows)

    # -- sealing a database from before encryption at rest -----------------------------------

    def upgrade(self, sealer: Sealer) -> None:
        dropped = False
        while True:
            progress = self._transaction(lambda connection: _seal_batch(connection, sealer))
            if progress is None:
                break
            dropped = dropped or progress
        if dropped:
            # Dropped columns stay in the table files until they are rewritten.
            self._run("VACUUM FULL note_events, history_items", ())
        self._transaction(lambda connection: _rebuild_index(connection, sealer))

    # -- account keys ---------------------------------------------------------------------

    def account_key(self, account_id: str) -> str | None:
        rows = self._read(_ACCOUNT_KEY, (account_id,))
        return str(rows[0][0]) if rows else None

    def add_account_key(self, account_id: str, wrapped: str) -> str:
        self._run(
            "INSERT INTO account_keys (account_id, wrapped) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (account_id, wrapped),
        )
        kept = self.account_key(account_id)
        assert kept is not None
        return kept

    def account_keys(self) -> list[tuple[str, str]]:
        rows = self._read("SELECT account_id, wrapped FROM account_keys ORDER BY account_id", ())
        return [(str(row[0]), str(row[1])) for row in rows]

    def replace_account_key(self, account_id: str, old: str, new: str) -> None:
        self._run(
            "UPDATE account_keys SET wrapped = %s WHERE account_id = %s AND wrapped = %s",
            (new, account_id, old),
        )

    # -- notes ----------------------------------------------------------------------------

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]:
        return _sealed_notes(self._read(_NOTE_EVENTS, (account_id, session_id, after)))

    def append_note_event(
        self, account_id: str, session_id: str, note: SealedNote, after: int
    ) -> int | None:
        rows = self._run(_APPEND_NOTE, _note_params(account_id, session_id, note, after))
        return int(rows[0][0]) if rows else None

    # -- history --------------------------------------------------------------------------

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, SealedItem]]:
        rows = self._read(
            f"SELECT seq, {SEALED_ITEM_COLUMNS} "
            "FROM history_items WHERE account_id = %s AND session_id = %s AND agent = %s "
            "AND seq > %s ORDER BY seq",
            (account_id, session_id, agent, after),
        )
        return [(int(row[0]), sealed_item(row[1:])) for row in rows]

    def search_candidates(
        self, account_id: str, session_id: str, agent: str, page: CandidatePage
    ) -> list[tuple[int, SealedItem]]:
        search = page.search
        # The rows holding the tokens come from the GIN index alone (tokens are scoped to
        # the account, session and agent by their key), with the columns that choose among
        # them. Left to itself, the planner prefers reading every row and testing its whole
        # token array: its costs leave out reading the arrays from TOAST, some ten times the
        # GIN lookup on a session of 1,000 items. The page is chosen from those rows, and
        # only its own rows are then read whole, by their key: joined to the session's rows
        # instead, the planner (which expects one row of each) tested every row against
        # every candidate, 100 ms for a page of 800 out of 2,000 candidates against 2 now.
        params: list[object] = [token_array(page.tokens), account_id, session_id, agent]
        clauses = ["account_id = %s", "session_id = %s", "agent = %s"]
        for column, value in search.filters():
            clauses.append(f"{column} = %s")
            params.append(value)
        if page.cursor is not None:
            clauses.append("seq < %s" if search.newest_first else "seq > %s")
            params.append(page.cursor)
        order = "DESC" if search.newest_first else "ASC"
        query = (
            f"WITH holding AS MATERIALIZED (SELECT seq, {_CHOOSING_COLUMNS} FROM history_items "
            "WHERE tokens @> %s::integer[]), "
            f"page AS MATERIALIZED (SELECT seq FROM holding WHERE {' AND '.join(clauses)} "
            f"ORDER BY seq {order} LIMIT {int(page.size)}) "
            f"SELECT seq, {SEALED_ITEM_COLUMNS} FROM history_items "
            f"WHERE seq = ANY(ARRAY(SELECT seq FROM page)) ORDER BY seq {order}"
        )

        def select(connection: psycopg.Connection) -> list[tuple[Any, ...]]:
            connection.execute("SET LOCAL enable_seqscan = off")
            return connection.execute(query, params).fetchall()

        rows = self._transaction(select, reads_only=True)
        return [(int(row[0]), sealed_item(row[1:])) for row in rows]

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[SealedItem]
    ) -> list[bool]:
        if not items:
            return []

        def insert(connection: psycopg.Connection) -> list[bool]:
            # Appends to one agent's history take turns (the lock lasts until commit), so
            # sequence numbers follow commit order: a reader asking for the items after the
            # last one it saw never misses an item that committed late with a smaller number.
            connection.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                (HISTORY_LOCK, history_lock_scope(account_id, session_id, agent)),
            )
            new: list[bool] = []
            for item in items:
                cursor = connection.execute(
                    "INSERT INTO history_items (account_id, session_id, agent, window_id, "
                    "item_key, role, tool_name, tool_namespace, sealed, tokens) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::integer[]) "
                    "ON CONFLICT DO NOTHING",
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
                        token_array(item.tokens),
                    ),
                )
                new.append(cursor.rowcount == 1)
            return new

        # One transaction for the whole exchange: all or nothing.
        return self._transaction(insert)


_ACCOUNT_KEY = "SELECT wrapped FROM account_keys WHERE account_id = %s"
#: A session's note writes after a sequence number, oldest first.
_NOTE_EVENTS = (
    "SELECT seq, action, timestamp, sealed FROM note_events "
    "WHERE account_id = %s AND session_id = %s AND seq > %s ORDER BY seq"
)
#: One note write, one statement committed on its own: a write whose predecessor already has
#: a successor conflicts in the unique chain index (waiting for that successor's commit if it
#: is under way) and inserts nothing. A session's writes each follow the last one committed,
#: so their sequence numbers rise in commit order.
_APPEND_NOTE = (
    "INSERT INTO note_events (account_id, session_id, action, timestamp, sealed, after_seq) "
    "VALUES (%s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (account_id, session_id, after_seq) DO NOTHING RETURNING seq"
)
#: Note writes of several sessions in one statement, each row as :data:`_APPEND_NOTE`'s: the
#: rows that conflict insert nothing, the others commit together. The rows come sorted by
#: session, so statements of two processes that wait for each other's rows wait in one
#: order, and never deadlock.
_APPEND_NOTES = (
    "INSERT INTO note_events (account_id, session_id, action, timestamp, sealed, after_seq) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::bytea[], "
    "%s::bigint[]) "
    "ON CONFLICT (account_id, session_id, after_seq) DO NOTHING "
    "RETURNING seq, account_id, session_id, after_seq"
)
#: The most note writes one statement carries.
WRITE_BATCH = 64
#: What is new in several sessions, each after a sequence number of its own: one statement
#: for the reads of sessions that ask at once, each row naming the question it answers by its
#: place among them. A session's rows are asked for in a subquery ordered by ``seq``, so that
#: any plan finds them as :data:`_NOTE_EVENTS` does, on the index that ends with ``seq``: in a
#: plain join, a plan kept across runs took the chain index (the same first columns) and read
#: every row of each session to keep those after its number.
_NOTE_EVENTS_OF_SESSIONS = (
    "SELECT asked.number, e.seq, e.action, e.timestamp, e.sealed "
    "FROM unnest(%s::text[], %s::text[], %s::bigint[]) "
    "WITH ORDINALITY AS asked(account_id, session_id, after, number) "
    "CROSS JOIN LATERAL (SELECT seq, action, timestamp, sealed FROM note_events "
    "WHERE account_id = asked.account_id AND session_id = asked.session_id "
    "AND seq > asked.after ORDER BY seq) AS e "
    "ORDER BY 1, 2"
)
#: The most sessions one statement of note reads asks about.
READ_BATCH = 64


def _note_params(
    account_id: str, session_id: str, note: SealedNote, after: int
) -> tuple[object, ...]:
    return (account_id, session_id, note.action, note.timestamp, note.sealed, after)


def _sealed_notes(rows: Sequence[Sequence[Any]]) -> list[tuple[int, SealedNote]]:
    return [(int(row[0]), SealedNote(row[1], int(row[2]), bytes(row[3]))) for row in rows]


class PostgresLoopNotes:
    """Note reads and writes on the event loop: a pool of asyncio connections of their own
    (at most ``max_connections``), opened by the first call on the loop that uses them.

    A statement's connection goes back to a list of its own, not to the pool, and the next
    statement takes it from there: lending and taking back through the pool (its lock,
    statistics and checks) cost as much as the statement itself, measured. The pool still
    makes every connection; a semaphore holds the statements under way to
    ``max_connections`` (waiting at most the pool's timeout for a turn), so whenever none is
    kept idle the pool has one to lend. A connection that broke, or is not idle, goes back
    to the pool, and a lost connection sends every kept one back to it as well, to be
    checked with its own.

    Note writes, and the reads of what is new in a session, share statements with others of
    their kind made at once (see :mod:`~ctxmodes_remote.service.batches`): at most
    :data:`WRITE_BATCH` writes (one a session at most: a session's calls take turns) and
    :data:`READ_BATCH` reads a statement."""

    def __init__(self, url: str, max_connections: int, timeout_s: float) -> None:
        self._url = url
        self._max_connections = max_connections
        self._timeout_s = timeout_s
        self._pool: AsyncConnectionPool | None = None
        self._opening: asyncio.Future[None] | None = None
        self._turns = asyncio.Semaphore(max_connections)
        #: Connections taken from the pool, idle, and each one's cursor (used again for
        #: every statement: making one per statement is a measurable part of a write).
        self._kept: list[tuple[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any]]] = []
        self._writes = StatementBatches(self._append_alone, self._append_together, WRITE_BATCH)
        self._reads = StatementBatches(self._events_alone, self._events_together, READ_BATCH)

    async def _opened(self) -> AsyncConnectionPool:
        pool = self._pool
        if pool is not None and self._opening is not None and self._opening.done():
            return pool
        if pool is None:
            pool = self._pool = AsyncConnectionPool(
                self._url,
                min_size=1,
                max_size=self._max_connections,
                timeout=self._timeout_s,
                kwargs={"autocommit": True},
                open=False,
            )
            # Connections are made in the background; a call waits for one at most the
            # pool's timeout (a database that is down fails the call, not the opening).
            self._opening = asyncio.ensure_future(pool.open(wait=False))
        assert self._opening is not None
        await asyncio.shield(self._opening)
        return pool

    async def close(self) -> None:
        await self._writes.settle()
        await self._reads.settle()
        if self._pool is not None:
            await self._give_back_kept(self._pool)
            await self._pool.close()

    async def ping(self) -> None:
        await self._run("SELECT 1", (), reads_only=True)

    async def _turn(self) -> None:
        """A turn to run a statement (one of ``max_connections``).

        :raises TimeoutError: none came within the pool's timeout."""
        if not self._turns.locked():
            await self._turns.acquire()
            return
        try:
            async with asyncio.timeout(self._timeout_s):
                await self._turns.acquire()
        except TimeoutError:
            raise TimeoutError(
                f"no database connection was free after {self._timeout_s:g} s"
            ) from None

    async def _take(
        self, pool: AsyncConnectionPool
    ) -> tuple[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any]]:
        if self._kept:
            return self._kept.pop()
        connection = await pool.getconn()
        return connection, connection.cursor()

    async def _give_back(
        self,
        pool: AsyncConnectionPool,
        kept: tuple[psycopg.AsyncConnection[Any], psycopg.AsyncCursor[Any]],
    ) -> None:
        connection = kept[0]
        if connection.broken or connection.info.transaction_status != TransactionStatus.IDLE:
            await pool.putconn(connection)
        else:
            self._kept.append(kept)

    async def _give_back_kept(self, pool: AsyncConnectionPool) -> None:
        kept, self._kept = self._kept, []
        for connection, _ in kept:
            await pool.putconn(connection)

    async def _run(
        self, query: str, params: Sequence[object], *, reads_only: bool = False
    ) -> list[tuple[Any, ...]]:
        """The rows of one statement (which returns rows), as :meth:`PostgresStorage._use`
        runs it: a lost connection has the pool check its idle ones (the kept ones among
        them), and a read is tried once more.

        :raises StorageUnavailableError: the database failed."""
        pool = await self._opened()
        for attempt in (1, 2):
            lost = False
            try:
                await self._turn()
                try:
                    kept = await self._take(pool)
                    try:
                        await kept[1].execute(query, params, prepare=True)
                        return await kept[1].fetchall()
                    except psycopg.OperationalError:
                        lost = kept[0].broken
                        raise
                    finally:
                        await self._give_back(pool, kept)
                finally:
                    self._turns.release()
            except (psycopg.Error, OSError, TimeoutError) as exc:
                if lost:
                    await self._give_back_kept(pool)
                    await pool.check()
                if not (lost and reads_only and attempt == 1):
                    raise StorageUnavailableError(f"the database failed: {_reason(exc)}") from None
        raise AssertionError("unreachable")

    async def data_version(self) -> None:
        # Postgres cannot say without a round trip: readers ask what is new.
        return None

    async def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, SealedNote]]:
        return await self._reads.call((account_id, session_id, after))

    async def account_key(self, account_id: str) -> str | None:
        rows = await self._run(_ACCOUNT_KEY, (account_id,), reads_only=True)
        return str(rows[0][0]) if rows else None

    async def append_note_event(
        self, account_id: str, session_id: str, note: SealedNote, after: int
    ) -> int | None:
        return await self._writes.call(_note_params(account_id, session_id, note, after))

    async def _append_alone(self, row: tuple[object, ...]) -> int | None:
        rows = await self._run(_APPEND_NOTE, row)
        return int(rows[0][0]) if rows else None

    async def _append_together(self, rows: Sequence[tuple[object, ...]]) -> list[int | None]:
        # In one order in every process, so that two statements never wait for each other's
        # rows (a deadlock).
        ordered = sorted(rows, key=lambda row: (row[0], row[1]))
        columns = [list(column) for column in zip(*ordered, strict=True)]
        inserted = await self._run(_APPEND_NOTES, columns)
        # A session has one write in a statement at most: a row names its write.
        seqs: dict[tuple[object, ...], int] = {
            (row[1], row[2], int(row[3])): int(row[0]) for row in inserted
        }
        return [seqs.get((row[0], row[1], row[5])) for row in rows]

    async def _events_alone(self, asked: tuple[str, str, int]) -> list[tuple[int, SealedNote]]:
        return _sealed_notes(await self._run(_NOTE_EVENTS, asked, reads_only=True))

    async def _events_together(
        self, asked: Sequence[tuple[str, str, int]]
    ) -> list[list[tuple[int, SealedNote]]]:
        columns = [list(column) for column in zip(*asked, strict=True)]
        rows = await self._run(_NOTE_EVENTS_OF_SESSIONS, columns, reads_only=True)
        # Each row names the question it answers by its place among them, from 1.
        found: list[list[tuple[Any, ...]]] = [[] for _ in asked]
        for row in rows:
            found[int(row[0]) - 1].append(row[1:])
        return [_sealed_notes(events) for events in found]


def _seal_batch(connection: psycopg.Connection, sealer: Sealer) -> bool | None:
    """Seal one batch of plaintext rows, or drop the plaintext columns when none is left
    (``True``); ``None`` when the plaintext columns are gone already."""
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    done = connection.execute(
        "SELECT 1 FROM schema_migrations WHERE version = %s", (PLAINTEXT_DROPPED,)
    ).fetchone()
    if done:
        return None
    notes = connection.execute(PLAINTEXT_NOTES).fetchall()
    if notes:
        with connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE note_events SET sealed = %s, path = '', text = '' WHERE seq = %s",
                [seal_plaintext_note(sealer, row) for row in notes],
            )
        return False
    items = connection.execute(PLAINTEXT_ITEMS).fetchall()
    if items:
        updates = []
        for row in items:
            sealed, seq = seal_plaintext_item(sealer, row)
            updates.append((sealed.sealed, token_array(sealed.tokens), seq))
        with connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE history_items SET sealed = %s, tokens = %s::integer[], content = '', "
                "images = NULL WHERE seq = %s",
                updates,
            )
        return False
    connection.execute(_DROP_PLAINTEXT)
    connection.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (PLAINTEXT_DROPPED,))
    return True


def _rebuild_index(connection: psycopg.Connection, sealer: Sealer) -> None:
    """Re-tokenise every item when the tokens column holds an earlier tokenisation's
    64-bit tokens (``bigint[]``)."""
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
    kind = connection.execute(
        "SELECT udt_name FROM information_schema.columns "
        "WHERE table_name = 'history_items' AND column_name = 'tokens'"
    ).fetchone()
    if kind is None or kind[0] != "_int8":
        return
    connection.execute(
        "ALTER TABLE history_items ALTER COLUMN tokens DROP DEFAULT, "
        "ALTER COLUMN tokens TYPE integer[] USING '{}', ALTER COLUMN tokens SET DEFAULT '{}'"
    )
    rows = connection.execute(
        f"SELECT seq, account_id, session_id, agent, {SEALED_ITEM_COLUMNS} FROM history_items"
    )
    updates = [
        (token_array(sealer.item_tokens(account_id, session_id, agent, sealed_item(stored))), seq)
        for seq, account_id, session_id, agent, *stored in rows.fetchall()
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE history_items SET tokens = %s::integer[] WHERE seq = %s", updates
        )


def _not_permitted(connection: psycopg.Connection, exc: psycopg.Error) -> str:
    """What to do when the service's role may not make or change its tables: on Postgres
    15 and newer, CREATE on the database is not enough, the tables go in its public schema."""
    role, database = connection.info.user, connection.info.dbname
    return (
        f"cannot use the database: role {role} may not create the service's tables in "
        f"database {database} ({_reason(exc)}); make a database the role owns "
        f"(CREATE DATABASE … OWNER {role}), or GRANT CREATE ON SCHEMA public TO {role}"
    )


def _reason(exc: BaseException) -> str:
    """The first line of a database error, without the URL or credentials."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
