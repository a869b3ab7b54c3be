""":class:`~ctxmodes_remote.service.storage.Storage` in Postgres, for several service
processes on several machines sharing one database (psycopg 3, a connection pool).

The schema is created and migrated by the service itself: numbered migrations, each applied
once inside a transaction that holds an advisory lock, so running them twice, or from
several processes starting at once, is safe. Every statement commits before it returns
(Postgres' default ``synchronous_commit``), so an acknowledged write is durable. The pool
checks a connection before lending it, so the service recovers by itself when Postgres
restarts; a request that meets the outage fails with :class:`StorageUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from ctxmodes_remote.service.storage import (
    ITEM_COLUMNS,
    Account,
    AccountExistsError,
    HistorySearch,
    NoteEvent,
    RecordedItem,
    StorageUnavailableError,
    history_rows,
    recorded_item,
)

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
        # Trigram index for history search: LIKE '%…%' finds candidates through it and
        # rechecks each, so answers stay exact. pg_trgm is a trusted extension: the
        # database's owner may create it.
        """
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX history_items_content_trgm ON history_items
            USING gin (content gin_trgm_ops);
        """,
    ),
    (
        3,
        # The images of recorded items (JSON, NULL for none), for history.read_item.
        "ALTER TABLE history_items ADD COLUMN IF NOT EXISTS images TEXT;",
    ),
)


def like_pattern(text: str) -> str:
    """A ``LIKE … ESCAPE '\\'`` pattern matching any string containing ``text`` literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


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


class PostgresStorage:
    """The storage interface over a Postgres database named by a ``postgresql://`` URL."""

    def __init__(self, url: str, *, max_connections: int = 4, timeout_s: float = 5.0) -> None:
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            timeout=timeout_s,
            kwargs={"autocommit": True},
            check=ConnectionPool.check_connection,
            open=False,
        )
        try:
            # Migrate over a connection of its own first: a database that cannot be reached
            # fails here at once, not after the pool's wait.
            with psycopg.connect(url, autocommit=True, connect_timeout=int(timeout_s)) as first:
                migrate(first)
            self._pool.open(wait=True, timeout=timeout_s)
        except (psycopg.Error, OSError, TimeoutError) as exc:
            self._pool.close()
            raise StorageUnavailableError(f"cannot use the database: {_reason(exc)}") from None

    def close(self) -> None:
        self._pool.close()

    def ping(self) -> None:
        self._run("SELECT 1", ())

    def _run(self, query: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        try:
            with self._pool.connection() as connection:
                cursor = connection.execute(query, params)
                return list(cursor.fetchall()) if cursor.description else []
        except psycopg.errors.UniqueViolation:
            raise
        except (psycopg.Error, OSError, TimeoutError) as exc:
            raise StorageUnavailableError(f"the database failed: {_reason(exc)}") from None

    # -- accounts and tokens --------------------------------------------------------------

    def create_account(self, account_id: str, name: str) -> Account:
        try:
            self._run("INSERT INTO accounts (account_id, name) VALUES (%s, %s)", (account_id, name))
        except psycopg.errors.UniqueViolation:
            raise AccountExistsError(f"an account named {name!r} exists already") from None
        return Account(account_id, name)

    def account_by_name(self, name: str) -> Account | None:
        rows = self._run("SELECT account_id, name FROM accounts WHERE name = %s", (name,))
        return Account(str(rows[0][0]), str(rows[0][1])) if rows else None

    def add_token(self, account_id: str, token_hash: str, created_at: int) -> None:
        self._run(
            "INSERT INTO tokens (token_hash, account_id, created_at) VALUES (%s, %s, %s)",
            (token_hash, account_id, created_at),
        )

    def account_for_token(self, token_hash: str) -> Account | None:
        rows = self._run(
            "SELECT accounts.account_id, accounts.name FROM tokens "
            "JOIN accounts ON accounts.account_id = tokens.account_id "
            "WHERE tokens.token_hash = %s",
            (token_hash,),
        )
        return Account(str(rows[0][0]), str(rows[0][1])) if rows else None

    # -- notes ----------------------------------------------------------------------------

    def note_events(
        self, account_id: str, session_id: str, after: int = 0
    ) -> list[tuple[int, NoteEvent]]:
        rows = self._run(
            "SELECT seq, action, path, text, timestamp FROM note_events "
            "WHERE account_id = %s AND session_id = %s AND seq > %s ORDER BY seq",
            (account_id, session_id, after),
        )
        return [
            (int(row[0]), NoteEvent(row[1], str(row[2]), str(row[3]), int(row[4]))) for row in rows
        ]

    def append_note_event(self, account_id: str, session_id: str, event: NoteEvent) -> int:
        rows = self._run(
            "INSERT INTO note_events (account_id, session_id, action, path, text, timestamp) "
            "VALUES (%s, %s, %s, %s, %s, %s) RETURNING seq",
            (account_id, session_id, event.action, event.path, event.text, event.timestamp),
        )
        return int(rows[0][0])

    # -- history --------------------------------------------------------------------------

    def history_items(
        self, account_id: str, session_id: str, agent: str, after: int = 0
    ) -> list[tuple[int, RecordedItem]]:
        rows = self._run(
            f"SELECT seq, {ITEM_COLUMNS} "
            "FROM history_items WHERE account_id = %s AND session_id = %s AND agent = %s "
            "AND seq > %s ORDER BY seq",
            (account_id, session_id, agent, after),
        )
        return [(int(row[0]), recorded_item(row[1:])) for row in rows]

    def search_history(
        self, account_id: str, session_id: str, agent: str, search: HistorySearch
    ) -> list[RecordedItem]:
        # LIKE is case-sensitive in Postgres and can use the trigram index.
        scope = (account_id, session_id, agent)
        contains = "content LIKE %s ESCAPE '\\'"
        sql, params = search.query(scope, contains, like_pattern(search.text), "%s")
        return search.in_arrival_order(self._run(sql, params))

    def append_history_items(
        self, account_id: str, session_id: str, agent: str, items: Sequence[RecordedItem]
    ) -> None:
        if not items:
            return
        rows = history_rows(account_id, session_id, agent, items)
        try:
            with (
                self._pool.connection() as connection,
                connection.transaction(),
                connection.cursor() as cursor,
            ):
                cursor.executemany(
                    "INSERT INTO history_items (account_id, session_id, agent, window_id, "
                    "item_key, role, content, tool_name, tool_namespace, images) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    rows,
                )
        except (psycopg.Error, OSError, TimeoutError) as exc:
            raise StorageUnavailableError(f"the database failed: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    """The first line of a database error, without the URL or credentials."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
