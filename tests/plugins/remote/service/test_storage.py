"""One storage conformance suite, two backends: SQLite (one file) and Postgres (a real
server), each under the sealing layer the engine uses. The engine relies on exactly these
behaviours."""

import pytest
from support.postgres_server import schema_of_version
from support.together import start_together

from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.sealed_storage import SealedStorage
from ctxmodes_remote.service.sqlite_storage import SqliteStorage
from ctxmodes_remote.service.storage import (
    AccountExistsError,
    NoteEvent,
    RecordedImage,
    RecordedItem,
    StorageUnavailableError,
    open_storage,
)

KEYS = KeyRing([b"t" * 32])


@pytest.fixture(params=["sqlite", "postgres"])
def reopen(request, tmp_path):
    """A factory of storage handles on one and the same database."""
    opened = []
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite3"

        def make():
            opened.append(SealedStorage(SqliteStorage(path), KEYS))
            return opened[-1]
    else:
        url = request.getfixturevalue("postgres_url")

        def make():
            opened.append(SealedStorage(open_storage(tmp_path, url), KEYS))
            return opened[-1]

    yield make
    for storage in opened:
        storage.close()


def test_accounts_and_tokens(reopen):
    storage = reopen()
    alice = storage.create_account("acct_a", "alice")
    with pytest.raises(AccountExistsError):
        storage.create_account("acct_x", "alice")
    assert storage.account_by_name("alice") == alice
    assert storage.account_by_name("bob") is None
    storage.add_token("acct_a", "hash-1", 1)
    assert storage.account_for_token("hash-1") == alice
    assert storage.account_for_token("hash-2") is None


def test_note_events_in_order_per_session_and_account(reopen):
    storage = reopen()
    first = storage.append_note_event("a", "s1", NoteEvent("write", "/root/notes/x", "1", 10), 0)
    storage.append_note_event("a", "s2", NoteEvent("write", "/root/notes/y", "other", 11), 0)
    storage.append_note_event("b", "s1", NoteEvent("write", "/root/notes/x", "theirs", 12), 0)
    # A writer that has not seen the session's latest write is refused; nothing is written.
    stale = NoteEvent("append", "/root/notes/x", "late", 13)
    assert storage.append_note_event("a", "s1", stale, 0) is None
    second = storage.append_note_event(
        "a", "s1", NoteEvent("append", "/root/notes/x", "2", 13), first
    )
    assert first is not None
    assert second is not None
    assert second > first
    events = storage.note_events("a", "s1")
    assert [(seq, e.action, e.text) for seq, e in events] == [
        (first, "write", "1"),
        (second, "append", "2"),
    ]
    assert storage.note_events("a", "s1", after=first) == [events[1]]
    assert [e.text for _, e in storage.note_events("b", "s1")] == ["theirs"]
    # What one handle wrote, another reads at once.
    assert reopen().note_events("a", "s1") == events


def test_history_items_keep_arrival_order_and_ignore_repeats(reopen):
    storage = reopen()
    items = [
        RecordedItem("w0", "m1", "user", "hello", None, None),
        RecordedItem("w0", "c1", "assistant", '{"tool":"t"}', "write_file", "notes"),
    ]
    storage.append_history_items("a", "s1", "/root", items)
    storage.append_history_items(
        "a", "s1", "/root", [items[0], RecordedItem("w1", "m1", "user", "again")]
    )
    storage.append_history_items(
        "a", "s1", "/root/worker", [RecordedItem("w9", "k", "user", "child")]
    )
    storage.append_history_items("b", "s1", "/root", [RecordedItem("w0", "z", "user", "theirs")])
    rows = storage.history_items("a", "s1", "/root")
    assert [item for _, item in rows] == [*items, RecordedItem("w1", "m1", "user", "again")]
    seqs = [seq for seq, _ in rows]
    assert seqs == sorted(seqs)
    assert storage.history_items("a", "s1", "/root", after=seqs[1]) == rows[2:]
    assert [i.content for _, i in reopen().history_items("a", "s1", "/root/worker")] == ["child"]
    assert [i.content for _, i in storage.history_items("b", "s1", "/root")] == ["theirs"]


def test_text_round_trips_exactly(reopen):
    storage = reopen()
    text = "tab\tnew\nline é 😀 \u200b"
    storage.append_note_event("a", "s", NoteEvent("write", "/root/notes/u", text, 1), 0)
    storage.append_history_items("a", "s", "/root", [RecordedItem("w", "i", "user", text)])
    assert storage.note_events("a", "s")[0][1].text == text
    assert storage.history_items("a", "s", "/root")[0][1].content == text


def test_images_round_trip_and_searches_leave_them_out(reopen):
    from ctxmodes_remote.service.storage import HistorySearch

    images = (
        RecordedImage("iVBORw0KGgo=", "image/png", "high"),
        RecordedImage("/9j/4AAQ", "image/jpeg", None),
    )
    item = RecordedItem("w", "i", "tool", "shot\n[image image/png]", "view_image", None, images)
    plain = RecordedItem("w", "j", "user", "no image here")
    storage = reopen()
    storage.append_history_items("a", "s", "/root", [item, plain])
    assert [found for _, found in reopen().history_items("a", "s", "/root")] == [item, plain]
    [match] = storage.search_history("a", "s", "/root", HistorySearch("shot", limit=5))
    assert (match.item_key, match.images) == ("i", ())


def test_postgres_migrations_are_safe_twice_and_concurrently(postgres_url, tmp_path):
    from ctxmodes_remote.service.postgres_storage import MIGRATIONS, PLAINTEXT_DROPPED, migrate

    opened, errors = start_together(
        lambda: SealedStorage(open_storage(tmp_path, postgres_url), KEYS), 6
    )
    assert errors == []
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as connection:
        assert migrate(connection) == []
        versions = [row[0] for row in connection.execute("SELECT version FROM schema_migrations")]
    assert sorted(versions) == sorted([*(version for version, _ in MIGRATIONS), PLAINTEXT_DROPPED])
    for storage in opened:
        storage.close()


def test_a_database_of_the_first_schema_is_upgraded_in_place(postgres_url, tmp_path):
    import psycopg

    from ctxmodes_remote.service.storage import HistorySearch

    with psycopg.connect(postgres_url, autocommit=True) as connection:
        schema_of_version(connection, 1)
        connection.execute(
            "INSERT INTO history_items (account_id, session_id, agent, window_id, item_key, "
            "role, content) VALUES ('a', 's', '/root', 'w', 'i', 'user', 'kept Text')"
        )
    storage = SealedStorage(open_storage(tmp_path, postgres_url), KEYS)
    try:
        found = storage.search_history("a", "s", "/root", HistorySearch("t Te", limit=5))
        assert [item.content for item in found] == ["kept Text"]
    finally:
        storage.close()
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        indexes = {
            row[0]
            for row in connection.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'history_items'"
            )
        }
    # The blind index serves the search.
    assert "history_items_tokens" in indexes


#: ``history_items`` as SQLite files made before items kept their images have it.
_SQLITE_HISTORY_BEFORE_IMAGES = """
CREATE TABLE history_items (
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
    UNIQUE (account_id, session_id, agent, window_id, item_key)
);
INSERT INTO history_items (account_id, session_id, agent, window_id, item_key, role, content)
    VALUES ('a', 's', '/root', 'w', 'old', 'user', 'kept [image]');
"""


def test_a_sqlite_file_from_before_images_is_migrated_in_place_once(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as old:
        old.executescript(_SQLITE_HISTORY_BEFORE_IMAGES)
    old.close()
    image = RecordedImage("iVBORw0KGgo=", "image/png", "low")
    new = RecordedItem("w", "new", "user", "[image image/png]", images=(image,))
    storage = SealedStorage(SqliteStorage(path), KEYS)
    storage.append_history_items("a", "s", "/root", [new])
    storage.close()
    # Opened again (the migration runs again and finds nothing to do): both rows read back.
    for _ in range(2):
        storage = SealedStorage(SqliteStorage(path), KEYS)
        rows = [item for _, item in storage.history_items("a", "s", "/root")]
        storage.close()
        assert rows == [RecordedItem("w", "old", "user", "kept [image]"), new]
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(history_items)")]
    # The plaintext columns are gone once every row is sealed.
    assert "images" not in columns
    assert "content" not in columns
    assert columns.count("sealed") == 1


def test_a_postgres_database_from_before_images_is_migrated_in_place(postgres_url, tmp_path):
    import psycopg

    from ctxmodes_remote.service.postgres_storage import MIGRATIONS, migrate

    with psycopg.connect(postgres_url, autocommit=True) as connection:
        schema_of_version(connection, 2)
        connection.execute(
            "INSERT INTO history_items (account_id, session_id, agent, window_id, item_key, "
            "role, content) VALUES ('a', 's', '/root', 'w', 'old', 'user', 'kept [image]')"
        )
    image = RecordedImage("iVBORw0KGgo=", "image/png", "original")
    new = RecordedItem("w", "new", "user", "[image image/png]", images=(image,))
    storage = SealedStorage(open_storage(tmp_path, postgres_url), KEYS)
    try:
        storage.append_history_items("a", "s", "/root", [new])
        rows = [item for _, item in storage.history_items("a", "s", "/root")]
    finally:
        storage.close()
    assert rows == [RecordedItem("w", "old", "user", "kept [image]"), new]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        assert migrate(connection) == []
        # The statement itself is safe to run again too (a hand-applied schema).
        connection.execute(MIGRATIONS[2][1])
        versions = [row[0] for row in connection.execute("SELECT version FROM schema_migrations")]
    assert sorted(versions) == [1, 2, 3, 4, 5, 6]


def test_an_unreachable_database_is_one_clear_error(tmp_path):
    pytest.importorskip("psycopg")
    with pytest.raises(StorageUnavailableError, match="cannot use the database"):
        open_storage(tmp_path, "postgresql://nobody@127.0.0.1:9/none?connect_timeout=2")
    with pytest.raises(StorageUnavailableError, match="postgresql:// URL"):
        open_storage(tmp_path, "mysql://x")


def test_postgres_history_appends_to_one_agent_take_turns_until_commit(postgres_url, tmp_path):
    """Sequence numbers follow commit order within an agent's history: an append waits while
    another transaction holds that agent's turn, so a reader asking for the items after the
    last it saw cannot miss one that commits late with a smaller number."""
    import threading

    import psycopg

    from ctxmodes_remote.service.postgres_storage import HISTORY_LOCK, history_lock_scope

    storage = SealedStorage(open_storage(tmp_path, postgres_url), KEYS)
    try:
        storage.append_history_items("a", "s1", "/root", [RecordedItem("w0", "m0", "user", "x")])
        finished: dict[str, threading.Event] = {
            "/root": threading.Event(),
            "/other": threading.Event(),
        }

        def append(agent: str) -> None:
            storage.append_history_items("a", "s1", agent, [RecordedItem("w0", "m1", "user", "y")])
            finished[agent].set()

        with psycopg.connect(postgres_url) as holder:
            with holder.transaction():
                holder.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                    (HISTORY_LOCK, history_lock_scope("a", "s1", "/root")),
                )
                threads = [threading.Thread(target=append, args=(a,)) for a in finished]
                for thread in threads:
                    thread.start()
                assert finished["/other"].wait(10), "another agent's history does not wait"
                assert not finished["/root"].wait(0.5), "the same agent's append went ahead"
            # The holder committed: the waiting append goes through.
            assert finished["/root"].wait(10)
        for thread in threads:
            thread.join(10)
        assert [i.content for _, i in storage.history_items("a", "s1", "/root")] == ["x", "y"]
    finally:
        storage.close()


def test_postgres_note_writes_of_an_older_database_join_the_chain(postgres_url, tmp_path):
    """Note writes made before each write named its predecessor are chained in place: a
    write against the latest is kept, one against an older write is refused, and a process
    of an earlier version, which names none, cannot write notes any more."""
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as connection:
        schema_of_version(connection, 4)
        for session, text in (("s1", "a"), ("s2", "other"), ("s1", "b"), ("s1", "c")):
            connection.execute(
                "INSERT INTO note_events (account_id, session_id, action, path, text, "
                "timestamp) VALUES ('a', %s, 'append', '/root/notes/n', %s, 1)",
                (session, text),
            )
    storage = SealedStorage(open_storage(tmp_path, postgres_url), KEYS)
    try:
        events = storage.note_events("a", "s1")
        assert [event.text for _, event in events] == ["a", "b", "c"]
        later = NoteEvent("append", "/root/notes/n", "d", 2)
        assert storage.append_note_event("a", "s1", later, events[1][0]) is None
        assert storage.append_note_event("a", "s1", later, events[2][0]) is not None
        assert storage.append_note_event("a", "s2", later, 0) is None
    finally:
        storage.close()
    with (
        psycopg.connect(postgres_url, autocommit=True) as connection,
        pytest.raises(psycopg.errors.NotNullViolation),
    ):
        connection.execute(
            "INSERT INTO note_events (account_id, session_id, action, timestamp, sealed) "
            "VALUES ('a', 's1', 'append', 3, ''::bytea)"
        )


def test_postgres_loop_notes_keep_their_connections_and_wait_for_a_free_one(postgres_url):
    """Note statements on the event loop take the connections they keep idle, not the
    pool's: the pool lends each connection once. More statements at once than connections
    wait for one, and one that finds none free within the timeout fails clearly."""
    import asyncio

    from ctxmodes_remote.service.postgres_storage import PostgresLoopNotes

    async def main() -> None:
        notes = PostgresLoopNotes(postgres_url, 2, 1.0)
        try:
            for _ in range(20):
                await notes.ping()
            # Six statements at once on two connections: each waits for its turn.
            await asyncio.gather(*(notes._run("SELECT pg_sleep(0.05)", ()) for _ in range(6)))
            assert notes._pool is not None
            assert notes._pool.get_stats()["requests_num"] == 2
            # Both connections held for longer than the timeout: the third statement fails.
            held = [asyncio.ensure_future(notes._run("SELECT pg_sleep(2)", ())) for _ in range(2)]
            await asyncio.sleep(0.2)
            with pytest.raises(StorageUnavailableError, match="no database connection was free"):
                await notes.ping()
            await asyncio.gather(*held)
            await notes.ping()
        finally:
            await notes.close()

    asyncio.run(main())


def _sealed(text: str):
    from ctxmodes_remote.service.storage import SealedNote

    return SealedNote("write", 1, text.encode())


def test_postgres_note_writes_made_while_one_is_under_way_share_a_statement(postgres_url, tmp_path):
    """A note write made while none is under way goes at once; those made while one is go
    together in one statement: each gets its own sequence number, a stale one among them is
    refused alone, and a statement that fails fails every write it carried."""
    import asyncio

    import psycopg

    storage = open_storage(tmp_path, postgres_url)
    notes = storage.loop_notes()
    # Another connection's uncommitted write to session "held": a write there waits for it.
    blocker = psycopg.connect(postgres_url)
    blocker.execute(
        "INSERT INTO note_events (account_id, session_id, action, timestamp, sealed, "
        "after_seq) VALUES ('a', 'held', 'write', 1, 'x'::bytea, 0)"
    )

    async def main() -> None:
        try:
            alone = await notes.append_note_event("a", "s9", _sealed("alone"), 0)
            assert alone is not None
            held = asyncio.ensure_future(notes.append_note_event("a", "held", _sealed("h"), 0))
            await asyncio.sleep(0.3)
            assert not held.done()
            first = await asyncio.gather(
                *(notes.append_note_event("a", f"s{n}", _sealed(f"{n}"), 0) for n in range(5))
            )
            assert None not in first
            assert len(set(first)) == 5
            # s0 writes after its first write; s1 names a write that is not its latest.
            second = await asyncio.gather(
                notes.append_note_event("a", "s0", _sealed("next"), first[0]),
                notes.append_note_event("a", "s1", _sealed("stale"), 0),
                notes.append_note_event("b", "s0", _sealed("other account"), 0),
            )
            assert second[0] is not None
            assert second[0] > max(first)
            assert second[1] is None
            assert second[2] is not None
            stored = await notes.note_events("a", "s0")
            assert [note.sealed for _, note in stored] == [b"0", b"next"]
            assert [note.sealed for _, note in await notes.note_events("a", "s1")] == [b"1"]
            # Postgres refuses a NUL in text: that row fails its statement, and the valid
            # write sent with it fails too; nothing of either is stored.
            failed = await asyncio.gather(
                notes.append_note_event("a", "s2", _sealed("valid"), first[2]),
                notes.append_note_event("a", "bad\x00session", _sealed("x"), 0),
                return_exceptions=True,
            )
            assert all(isinstance(error, StorageUnavailableError) for error in failed)
            assert [note.sealed for _, note in await notes.note_events("a", "s2")] == [b"2"]
            # The other connection gives up its write: the one waiting for it goes in.
            blocker.rollback()
            assert await held is not None
            # Alone again, the valid write goes through.
            assert await notes.append_note_event("a", "s2", _sealed("valid"), first[2])
        finally:
            await notes.close()

    try:
        asyncio.run(main())
    finally:
        blocker.close()
        storage.close()


def test_postgres_note_reads_made_while_one_is_under_way_share_a_statement(postgres_url, tmp_path):
    """The reads of what is new in a session made while one is under way go together in one
    statement: each session gets its own events after its own sequence number (none for a
    session without any), as it would alone; a statement that fails fails every read it
    carried."""
    import asyncio

    from ctxmodes_remote.service import postgres_storage

    storage = open_storage(tmp_path, postgres_url)
    notes = storage.loop_notes()
    statements: list[str] = []
    run = notes._run

    async def counted(query, params, **options):
        statements.append(query)
        return await run(query, params, **options)

    notes._run = counted

    async def main() -> None:
        try:
            written = {}
            for account, session, count in (("a", "s0", 3), ("a", "s1", 1), ("b", "s0", 2)):
                after = 0
                for n in range(count):
                    after = await notes.append_note_event(
                        account, session, _sealed(f"{account}{session}{n}"), after
                    )
                    written.setdefault((account, session), []).append(after)
            asked = [
                ("a", "s1", 0),
                ("a", "s0", written["a", "s0"][0]),
                ("b", "s0", 0),
                ("a", "s2", 0),
                ("b", "s1", 0),
                ("a", "s0", 0),  # a session asked about twice in a statement, each for itself
            ]
            alone = [await notes.note_events(*question) for question in asked]
            assert [[note.sealed for _, note in events] for events in alone] == [
                [b"as10"], [b"as01", b"as02"], [b"bs00", b"bs01"], [], [],
                [b"as00", b"as01", b"as02"],
            ]  # fmt: skip
            assert [seq for seq, _ in alone[1]] == written["a", "s0"][1:]
            statements.clear()
            assert await asyncio.gather(*(notes.note_events(*q) for q in asked)) == alone
            # The first went at once; the others, made while it was under way, together.
            assert statements == [
                postgres_storage._NOTE_EVENTS,
                postgres_storage._NOTE_EVENTS_OF_SESSIONS,
            ]
            # Postgres refuses a NUL in text: the statement fails, and so does every read in it.
            failed = await asyncio.gather(
                notes.note_events("a", "s9"),
                notes.note_events("a", "s1"),
                notes.note_events("a", "bad\x00session"),
                return_exceptions=True,
            )
            assert failed[0] == []
            assert all(isinstance(error, StorageUnavailableError) for error in failed[1:])
            assert await notes.note_events("a", "s1") == alone[0]
        finally:
            await notes.close()

    try:
        asyncio.run(main())
    finally:
        storage.close()


def test_postgres_statements_of_note_writes_from_two_processes_never_deadlock(
    postgres_url, tmp_path
):
    """Two processes' statements of note writes to the same sessions, arriving in opposite
    orders, wait for each other's rows in one order: every write is either stored or refused
    as stale, and each session's writes form one chain."""
    import asyncio

    storages = [open_storage(tmp_path, postgres_url) for _ in range(2)]
    sessions = [f"s{n}" for n in range(6)]

    async def main() -> None:
        loops = [storage.loop_notes() for storage in storages]
        latest = dict.fromkeys(sessions, 0)
        try:
            for round_ in range(15):
                calls = [
                    notes.append_note_event("a", session, _sealed(f"{round_}"), latest[session])
                    for index, notes in enumerate(loops)
                    for session in (sessions if index == 0 else sessions[::-1])
                ]
                results = await asyncio.gather(*calls)
                for session in sessions:
                    stored = await loops[0].note_events("a", session)
                    latest[session] = stored[-1][0]
                # Of two writes naming the same predecessor, exactly one was stored.
                assert sum(seq is not None for seq in results) == len(sessions)
            for session in sessions:
                assert len(await loops[0].note_events("a", session)) == 15
        finally:
            for notes in loops:
                await notes.close()

    try:
        asyncio.run(main())
    finally:
        for storage in storages:
            storage.close()
