"""Encryption at rest: what a database file, a ``serve backup`` copy or a ``pg_dump`` holds
without ``master.keys`` reveals no note, path, history text, tool argument or image; key
rotation, dropped and wrong keys, and the in-place migration of plaintext databases."""

import json
import sqlite3

import pytest
from support.postgres_server import schema_of_version
from support.together import start_together

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import AccountKeyError, KeyRing
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.sealed_storage import SealedStorage
from ctxmodes_remote.service.sqlite_storage import DATABASE_NAME, SqliteStorage, backup_sqlite
from ctxmodes_remote.service.storage import SEAL_BATCH, RecordedImage, RecordedItem, open_storage

OLD_KEY, NEW_KEY, FOREIGN_KEY = b"o" * 32, b"n" * 32, b"f" * 32
CONTEXT = {"session_id": "s1", "current_agent_name": "/root"}
#: Strings that must never appear in what the database holds (in any form a grep finds).
NOTE_PATH = "zebra-plans-8812.md"
NOTE_TEXT = "NOTE-TEXT-kumquat-4411"
ITEM_TEXT = "ITEM-TEXT-persimmon-5523"
TOOL_ARGUMENTS = '{"cmd":"ARG-rutabaga-9034"}'
TOOL_OUTPUT = "OUTPUT-tamarind-7741"
IMAGE_DATA = "SU1BR0UtcXVpbmNlLTMzMDE="
#: Queries that match nothing: a search leaves no trace of them (they are never stored).
NOTES_QUERY = "NOTES-QUERY-mangosteen-6620"
HISTORY_QUERY = "HISTORY-QUERY-salsify-1187"
SECRETS = (
    NOTE_PATH,
    NOTE_TEXT,
    ITEM_TEXT,
    "ARG-rutabaga-9034",
    TOOL_OUTPUT,
    IMAGE_DATA,
    NOTES_QUERY,
    HISTORY_QUERY,
)


def items(window="w0"):
    return [
        RecordedItem(window, "m1", "user", f"please {ITEM_TEXT}"),
        RecordedItem(window, "c1", "assistant", TOOL_ARGUMENTS, "shell", None),
        RecordedItem(window, "o1", "tool", TOOL_OUTPUT, "shell", None),
        RecordedItem(
            window,
            "v1",
            "tool",
            "[image image/png]",
            "view_image",
            None,
            (RecordedImage(IMAGE_DATA, "image/png", "high"),),
        ),
    ]


def call(engine, account, family, operation, **arguments):
    answer = engine.alpha(
        account, family, operation, {**arguments, "context": CONTEXT}, encrypted_arguments=False
    )
    return json.loads(engine.keyring.decrypt(account.account_id, answer["encrypted_output"]))


def fill(engine, account, window="w0"):
    """Everything the database may hold of an account: a note, history items, a search."""
    call(engine, account, "notes", "write_file", path=NOTE_PATH, text=NOTE_TEXT)
    call(engine, account, "notes", "append_to_file", path=NOTE_PATH, text=f" {NOTE_TEXT}!")
    engine.record(account, "s1", "/root", items(window))
    found = call(engine, account, "history", "search_contents", query=ITEM_TEXT)
    assert window in [item["window_id"] for item in found["items"]]
    assert {item["item_id"] for item in found["items"]} == {"m1"}
    assert call(engine, account, "notes", "search_contents", query=NOTES_QUERY)["files"] == []
    assert call(engine, account, "history", "search_contents", query=HISTORY_QUERY)["items"] == []
    # The thread hint names the note's path: it is answered, never kept.
    hint = engine.alpha(
        account, "notes", "thread_hint", {"context": CONTEXT}, encrypted_arguments=False
    )
    assert NOTE_PATH in hint["text"]


def assert_readable(engine, account):
    note = call(engine, account, "notes", "read_file", path=NOTE_PATH)
    assert note["file"]["content"] == f"{NOTE_TEXT} {NOTE_TEXT}!"
    found = call(engine, account, "history", "search_contents", query="rutabaga")
    assert [item["item_id"] for item in found["items"]][:1] == ["c1"]


def assert_holds_none(data: bytes, where: str):
    for secret in SECRETS:
        assert secret.encode() not in data, f"{secret!r} readable in {where}"


def assert_keys_only_wrapped(data: bytes, engine, account, keys, where: str):
    """The account's data and index keys are in ``data`` only wrapped: not raw, nor in the
    spellings a dump or a text column would give them."""
    import base64

    secret = KeyRing(keys).unwrap(
        account.account_id, engine._storage.backend.account_key(account.account_id)
    )
    assert len(secret) >= 64  # a data key and an index key
    for key in (secret, secret[:32], secret[32:]):
        for spelling in (
            key,
            key.hex().encode(),
            base64.b64encode(key),
            base64.urlsafe_b64encode(key),
        ):
            assert spelling not in data, f"an account key readable in {where}"


def sqlite_bytes(directory):
    """The database file and its journal files, as a holder of the directory sees them."""
    return b"".join(path.read_bytes() for path in sorted(directory.glob(f"{DATABASE_NAME}*")))


@pytest.fixture
def sqlite_engine(tmp_path):
    data = tmp_path / "data"

    def start(keys):
        return ServiceEngine(SqliteStorage.in_directory(data), KeyRing(keys))

    return data, start


def test_sqlite_file_and_backup_hold_no_plaintext_before_and_after_rotation(sqlite_engine):
    data, start = sqlite_engine
    engine = start([OLD_KEY])
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    assert_holds_none(sqlite_bytes(data), "the SQLite file")
    assert_keys_only_wrapped(sqlite_bytes(data), engine, account, [OLD_KEY], "the SQLite file")
    backup_sqlite(data, data.parent / "copy.sqlite3")
    assert_holds_none((data.parent / "copy.sqlite3").read_bytes(), "a backup")
    engine.close()

    # Rotated: the new key wraps the account's secret; old data opens, new data is sealed.
    rotated = start([NEW_KEY, OLD_KEY])
    assert_readable(rotated, account)
    fill(rotated, account, window="w1")
    rotated.close()
    assert_holds_none(sqlite_bytes(data), "the SQLite file after rotation")
    backup_sqlite(data, data.parent / "copy2.sqlite3")
    assert_holds_none((data.parent / "copy2.sqlite3").read_bytes(), "a backup after rotation")

    # The old key dropped after the re-wrap: everything still opens.
    dropped = start([NEW_KEY])
    assert_readable(dropped, account)
    dropped.close()


def test_a_key_dropped_before_the_rewrap_or_a_new_key_file_refuses_to_start(sqlite_engine):
    _, start = sqlite_engine
    engine = start([OLD_KEY])
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    engine.close()
    for keys in ([FOREIGN_KEY], [NEW_KEY]):
        with pytest.raises(AccountKeyError, match="opens none of this database's data"):
            start(keys)
    # The right key still opens all of it; a key file reloaded without it stops that at once.
    engine = start([OLD_KEY])
    assert_readable(engine, account)
    engine.replace_keyring(KeyRing([NEW_KEY]))
    with pytest.raises(AccountKeyError):
        call(engine, account, "notes", "read_file", path=NOTE_PATH)
    engine.close()


def test_a_backup_from_before_a_rotation_needs_the_key_it_was_taken_under(sqlite_engine):
    data, start = sqlite_engine
    engine = start([OLD_KEY])
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    backup_sqlite(data, data.parent / "before.sqlite3")
    engine.close()
    start([NEW_KEY, OLD_KEY]).close()  # rotated and re-wrapped
    start([NEW_KEY]).close()  # the old key dropped: the live database still opens
    (data.parent / "before.sqlite3").replace(data / DATABASE_NAME)
    # The backup's account keys are still wrapped under the dropped key.
    with pytest.raises(AccountKeyError, match="opens none of this database's data"):
        start([NEW_KEY])
    restored = start([NEW_KEY, OLD_KEY])
    assert_readable(restored, account)
    restored.close()


def test_an_account_whose_key_is_not_held_is_refused_never_served(sqlite_engine):
    _, start = sqlite_engine
    engine = start([OLD_KEY])
    storage = engine._storage.backend
    alice = create_token(storage, "alice").account
    bob = create_token(storage, "bob").account
    fill(engine, alice)
    fill(engine, bob)
    # Bob's secret re-wrapped under a key this service does not hold.
    wrapped = storage.account_key(bob.account_id)
    secret = KeyRing([OLD_KEY]).unwrap(bob.account_id, wrapped)
    storage.replace_account_key(
        bob.account_id, wrapped, KeyRing([FOREIGN_KEY]).wrap(bob.account_id, secret)
    )
    engine.close()
    engine = start([OLD_KEY])
    assert_readable(engine, alice)
    for family, operation, arguments in (
        ("notes", "read_file", {"path": NOTE_PATH}),
        ("history", "search_contents", {"query": "rutabaga"}),
        ("history", "list_items", {}),
    ):
        with pytest.raises(AccountKeyError, match=r"master key that master\.keys does not hold"):
            call(engine, bob, family, operation, **arguments)
    engine.close()


def test_a_damaged_sealed_value_is_refused(sqlite_engine):
    from ctxmodes_remote.service.sealing import SealedValueError

    data, start = sqlite_engine
    engine = start([OLD_KEY])
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    engine.close()
    with sqlite3.connect(data / DATABASE_NAME) as db:
        # One bit of a note flipped; an item's value moved onto another item.
        seq, sealed = db.execute("SELECT seq, sealed FROM note_events LIMIT 1").fetchone()
        damaged = sealed[:20] + bytes([sealed[20] ^ 1]) + sealed[21:]
        db.execute("UPDATE note_events SET sealed = ? WHERE seq = ?", (damaged, seq))
        db.execute(
            "UPDATE history_items SET sealed = (SELECT sealed FROM history_items "
            "WHERE item_key = 'm1') WHERE item_key = 'c1'"
        )
    db.close()
    engine = start([OLD_KEY])
    with pytest.raises(SealedValueError):
        call(engine, account, "notes", "read_file", path=NOTE_PATH)
    with pytest.raises(SealedValueError):
        call(engine, account, "history", "search_contents", query="rutabaga")
    engine.close()


#: Edits of a copy of the database, each moving sealed values to another place, and the call
#: that reads that place: (statements, (family, operation, arguments, session, agent)).
MOVES = {
    "a note to another session": (
        ["UPDATE note_events SET session_id = 's2' WHERE account_id = :alice"],
        ("notes", "read_file", {"path": NOTE_PATH}, "s2", "/root"),
    ),
    "a note to another account": (
        [
            "DELETE FROM note_events WHERE account_id = :bob",
            "UPDATE note_events SET account_id = :bob WHERE account_id = :alice",
        ],
        ("notes", "read_file", {"path": NOTE_PATH}, "s1", "/root"),
    ),
    "an item to another agent": (
        ["UPDATE history_items SET agent = '/root/other' WHERE item_key = 'm1'"],
        ("history", "list_items", {}, "s1", "/root/other"),
    ),
    "an item to another window": (
        ["UPDATE history_items SET window_id = 'w9' WHERE item_key = 'm1'"],
        ("history", "read_item", {"window_id": "w9", "item_id": "m1"}, "s1", "/root"),
    ),
}


@pytest.mark.parametrize("move", MOVES)
def test_a_sealed_value_moved_to_another_place_is_refused(sqlite_engine, move):
    """A value is bound to its account, session and (for history) agent, window and item:
    moved to another place in the database, it is refused there, never read as that
    place's."""
    from ctxmodes_remote.service.sealing import SealedValueError

    data, start = sqlite_engine
    engine = start([OLD_KEY])
    alice = create_token(engine._storage.backend, "alice").account
    bob = create_token(engine._storage.backend, "bob").account
    fill(engine, alice)
    fill(engine, bob)
    engine.close()
    statements, (family, operation, arguments, session, agent) = MOVES[move]
    ids = {"alice": alice.account_id, "bob": bob.account_id}
    with sqlite3.connect(data / DATABASE_NAME) as db:
        for statement in statements:
            db.execute(statement, {name: ids[name] for name in ids if f":{name}" in statement})
    db.close()
    engine = start([OLD_KEY])
    reader = bob if move.endswith("account") else alice
    context = {"session_id": session, "current_agent_name": agent}
    with pytest.raises(SealedValueError):
        engine.alpha(
            reader, family, operation, {**arguments, "context": context}, encrypted_arguments=False
        )
    engine.close()


# -- migration of databases from before encryption at rest ------------------------------------

_SQLITE_PLAINTEXT_SCHEMA = """
CREATE TABLE accounts (account_id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE tokens (token_hash TEXT PRIMARY KEY, account_id TEXT NOT NULL
    REFERENCES accounts(account_id), created_at INTEGER NOT NULL);
CREATE TABLE note_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, account_id TEXT NOT NULL,
    session_id TEXT NOT NULL, action TEXT NOT NULL, path TEXT NOT NULL, text TEXT NOT NULL,
    timestamp INTEGER NOT NULL);
CREATE TABLE history_items (seq INTEGER PRIMARY KEY AUTOINCREMENT, account_id TEXT NOT NULL,
    session_id TEXT NOT NULL, agent TEXT NOT NULL, window_id TEXT NOT NULL,
    item_key TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, tool_name TEXT,
    tool_namespace TEXT, images TEXT,
    UNIQUE (account_id, session_id, agent, window_id, item_key));
"""

#: More rows than one sealing batch holds, so a migration runs over several transactions.
PLAINTEXT_ITEMS = SEAL_BATCH + 150


def plaintext_rows():
    notes = [("acct_a", "s1", "write", f"/root/notes/{NOTE_PATH}", NOTE_TEXT, 1)]
    image = json.dumps([{"data": IMAGE_DATA, "mime_type": "image/png", "detail": None}])
    history = [
        ("acct_a", "s1", "/root", "w0", "c1", "assistant", TOOL_ARGUMENTS, "shell", None, None),
        ("acct_a", "s1", "/root", "w0", "v1", "tool", "[image]", "view_image", None, image),
    ] + [
        ("acct_a", "s1", "/root", "w0", f"m{n}", "user", f"{ITEM_TEXT} {n}", None, None, None)
        for n in range(PLAINTEXT_ITEMS)
    ]
    return notes, history


def make_plaintext_sqlite(path):
    notes, history = plaintext_rows()
    with sqlite3.connect(path) as db:
        db.executescript(_SQLITE_PLAINTEXT_SCHEMA)
        db.execute("INSERT INTO accounts VALUES ('acct_a', 'alice')")
        db.executemany(
            "INSERT INTO note_events (account_id, session_id, action, path, text, timestamp) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            notes,
        )
        db.executemany(
            "INSERT INTO history_items (account_id, session_id, agent, window_id, item_key, "
            "role, content, tool_name, tool_namespace, images) VALUES (?,?,?,?,?,?,?,?,?,?)",
            history,
        )
    db.close()


def assert_migrated(storage):
    from ctxmodes_remote.service.storage import HistorySearch

    [(_, note)] = storage.note_events("acct_a", "s1")
    assert (note.path, note.text) == (f"/root/notes/{NOTE_PATH}", NOTE_TEXT)
    rows = [item for _, item in storage.history_items("acct_a", "s1", "/root")]
    assert len(rows) == PLAINTEXT_ITEMS + 2
    assert rows[1].images == (RecordedImage(IMAGE_DATA, "image/png", None),)
    query = f"{ITEM_TEXT} 64"
    found = storage.search_history("acct_a", "s1", "/root", HistorySearch(query, limit=25))
    expected = [f"m{n}" for n in range(PLAINTEXT_ITEMS) if query in f"{ITEM_TEXT} {n}"]
    assert [item.item_key for item in found] == expected


class Interrupted(Exception):
    pass


def interrupt_after(calls):
    """A ``seal_item`` that stops the migration after ``calls`` items, as a kill would."""
    original = SealedStorage.seal_item
    count = iter(range(calls))

    def seal_item(self, *args):
        if next(count, None) is None:
            raise Interrupted
        return original(self, *args)

    return seal_item


def test_a_plaintext_sqlite_file_is_sealed_in_place_resumably_and_by_racing_processes(
    tmp_path, monkeypatch
):
    path = tmp_path / DATABASE_NAME
    make_plaintext_sqlite(path)
    keys = KeyRing([OLD_KEY])
    # Killed half-way (past a whole batch): what was sealed stays sealed.
    with monkeypatch.context() as patched:
        patched.setattr(SealedStorage, "seal_item", interrupt_after(SEAL_BATCH + 10))
        with pytest.raises(Interrupted):
            SealedStorage(SqliteStorage(path), keys)
    with sqlite3.connect(path) as db:
        sealed = db.execute("SELECT count(*) FROM history_items WHERE sealed IS NOT NULL")
        assert sealed.fetchone()[0] == SEAL_BATCH
    db.close()
    # Several processes start at once and finish it together.
    opened, errors = start_together(lambda: SealedStorage(SqliteStorage(path), keys), 4)
    assert errors == []
    for storage in opened:
        assert_migrated(storage)
        storage.close()
    assert_holds_none(sqlite_bytes(tmp_path), "the migrated SQLite file")
    backup_sqlite(tmp_path, tmp_path / "copy.sqlite3")
    assert_holds_none((tmp_path / "copy.sqlite3").read_bytes(), "a backup of the migrated file")


# -- Postgres ---------------------------------------------------------------------------------


def test_pg_dump_holds_no_plaintext_before_and_after_rotation(postgres_server, tmp_path):
    url = postgres_server.database()

    def start(keys):
        return ServiceEngine(open_storage(tmp_path, url), KeyRing(keys))

    engine = start([OLD_KEY])
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    assert_keys_only_wrapped(postgres_server.dump(url), engine, account, [OLD_KEY], "a pg_dump")
    engine.close()
    assert_holds_none(postgres_server.dump(url), "a pg_dump")
    rotated = start([NEW_KEY, OLD_KEY])
    fill(rotated, account, window="w1")
    rotated.close()
    assert_holds_none(postgres_server.dump(url), "a pg_dump after rotation")
    with pytest.raises(AccountKeyError):
        start([FOREIGN_KEY])
    dropped = start([NEW_KEY])
    assert_readable(dropped, account)
    dropped.close()


def test_the_blind_index_relates_items_only_within_one_agent_of_one_session(
    postgres_server, tmp_path
):
    """What the database reveals of equal text: the same item under one agent of one session
    has the same tokens, under another session, agent or account tokens unrelated to them."""
    import psycopg

    url = postgres_server.database()
    engine = ServiceEngine(open_storage(tmp_path, url), KeyRing([OLD_KEY]))
    alice = create_token(engine._storage.backend, "alice").account
    bob = create_token(engine._storage.backend, "bob").account
    text = f"the same words in every scope: {ITEM_TEXT}"
    scopes = {
        "here": (alice, "s1", "/root", "m1"),
        "here again": (alice, "s1", "/root", "m2"),
        "another session": (alice, "s2", "/root", "m1"),
        "another agent": (alice, "s1", "/root/other", "m1"),
        "another account": (bob, "s1", "/root", "m1"),
    }
    for account, session, agent, key in scopes.values():
        engine.record(account, session, agent, [RecordedItem("w0", key, "user", text)])
    engine.close()
    with psycopg.connect(url) as connection:
        tokens = {
            name: set(
                connection.execute(
                    "SELECT tokens FROM history_items WHERE account_id = %s AND session_id = %s "
                    "AND agent = %s AND item_key = %s",
                    (account.account_id, session, agent, key),
                ).fetchone()[0]
            )
            for name, (account, session, agent, key) in scopes.items()
        }
    assert len(tokens["here"]) > len(set(text))  # pieces of one to three characters
    assert tokens["here again"] == tokens["here"]
    for other in ("another session", "another agent", "another account"):
        assert not tokens[other] & tokens["here"], other


def test_a_sealed_value_is_its_plaintext_and_29_bytes():
    """The length a sealed value shows: the plaintext's, plus a version byte, a nonce and a
    tag."""
    from ctxmodes_remote.service.sealing import AccountSecrets, new_secret

    secrets = AccountSecrets(new_secret())
    for size in (0, 1, 100, 10_000):
        assert len(secrets.seal(b"x" * size, b"place")) == size + 29


def test_a_plaintext_postgres_database_is_sealed_in_place_resumably(
    postgres_server, tmp_path, monkeypatch
):
    import psycopg

    url = postgres_server.database()
    notes, history = plaintext_rows()
    with psycopg.connect(url, autocommit=True) as connection:
        schema_of_version(connection, 3)
        # What migration 2 made before encryption at rest: a trigram index of the plaintext.
        connection.execute(
            "CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE INDEX history_items_content_trgm "
            "ON history_items USING gin (content gin_trgm_ops)"
        )
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO accounts VALUES ('acct_a', 'alice')")
            cursor.executemany(
                "INSERT INTO note_events (account_id, session_id, action, path, text, "
                "timestamp) VALUES (%s, %s, %s, %s, %s, %s)",
                notes,
            )
            cursor.executemany(
                "INSERT INTO history_items (account_id, session_id, agent, window_id, "
                "item_key, role, content, tool_name, tool_namespace, images) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                history,
            )
    assert ITEM_TEXT.encode() in postgres_server.dump(url)
    keys = KeyRing([OLD_KEY])
    with monkeypatch.context() as patched:
        patched.setattr(SealedStorage, "seal_item", interrupt_after(SEAL_BATCH + 10))
        with pytest.raises(Interrupted):
            SealedStorage(open_storage(tmp_path, url), keys)
    opened, errors = start_together(lambda: SealedStorage(open_storage(tmp_path, url), keys), 3)
    assert errors == []
    for storage in opened:
        assert_migrated(storage)
        storage.close()
    assert_holds_none(postgres_server.dump(url), "a pg_dump of the migrated database")
    with psycopg.connect(url, autocommit=True) as connection:
        indexes = {
            row[0]
            for row in connection.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'history_items'"
            )
        }
        columns = {
            row[0]
            for row in connection.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name IN ('history_items', 'note_events')"
            )
        }
    assert "history_items_content_trgm" not in indexes
    assert not columns & {"content", "images", "path", "text"}


def test_a_blind_index_of_an_earlier_tokenisation_is_rebuilt(sqlite_engine, postgres_server):
    """The first encrypted layout kept 64-bit tokens (a plain SQLite table, a Postgres
    ``bigint[]``): opening such a database re-tokenises every item, and search finds them."""
    import psycopg

    data, start = sqlite_engine
    engine = start([OLD_KEY])
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    engine.close()
    with sqlite3.connect(data / DATABASE_NAME) as db:
        db.execute("DROP TABLE history_tokens")
        db.execute(
            "CREATE TABLE history_tokens (token INTEGER NOT NULL, seq INTEGER NOT NULL, "
            "PRIMARY KEY (token, seq)) WITHOUT ROWID"
        )
    db.close()
    engine = start([OLD_KEY])
    assert_readable(engine, account)
    engine.close()

    url = postgres_server.database()
    engine = ServiceEngine(open_storage(data, url), KeyRing([OLD_KEY]))
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    engine.close()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "ALTER TABLE history_items ALTER COLUMN tokens DROP DEFAULT, "
            "ALTER COLUMN tokens TYPE bigint[] USING '{}'"
        )
    engine = ServiceEngine(open_storage(data, url), KeyRing([OLD_KEY]))
    assert_readable(engine, account)
    engine.close()
    with psycopg.connect(url, autocommit=True) as connection:
        kind = connection.execute(
            "SELECT udt_name FROM information_schema.columns "
            "WHERE table_name = 'history_items' AND column_name = 'tokens'"
        ).fetchone()
    assert kind == ("_int4",)


@pytest.mark.slow  # starts `ctxmodes serve` processes
def test_serve_refuses_to_start_without_its_key_file_or_with_another(tmp_path):
    from support.serve_process import ctxmodes

    from ctxmodes_remote.service.crypto import KEY_FILE_NAME, load_or_create_keyring

    data = tmp_path / "data"
    data.mkdir()
    engine = ServiceEngine(SqliteStorage.in_directory(data), load_or_create_keyring(data))
    account = create_token(engine._storage.backend, "alice").account
    fill(engine, account)
    engine.close()
    script = tmp_path / "script.json"
    script.write_text('{"responses": []}')
    serve = ("serve", "--upstream", f"scripted:{script}", "--data", str(data), "--port", "0")

    keys = data / KEY_FILE_NAME
    kept = keys.read_bytes()
    keys.unlink()
    missing = ctxmodes(*serve, check=False)
    assert missing.returncode == 1
    assert missing.stderr.endswith(
        f"ctxmodes: error: {keys} is missing, and the database is encrypted under it: copy "
        "it from another process of this service, or restore it\n"
    )
    assert not keys.exists(), "no new key may replace the lost one"

    load_or_create_keyring(data)  # another key file
    wrong_key = (
        "ctxmodes: error: master.keys opens none of this database's data: it was encrypted "
        "under other master keys (start with the key file it was made with; every process "
        "needs the same one)\n"
    )
    other = ctxmodes(*serve, check=False)
    assert (other.returncode, other.stderr) == (1, wrong_key)
    # A database of a version that recorded no master key: its account keys tell, and the
    # refusal is still the one line.
    with sqlite3.connect(data / DATABASE_NAME) as connection:
        connection.execute("DELETE FROM account_keys WHERE account_id = 'master-key-check'")
    connection.close()
    older = ctxmodes(*serve, check=False)
    assert (older.returncode, older.stderr) == (1, wrong_key)
    keys.write_bytes(kept)
    engine = ServiceEngine(SqliteStorage.in_directory(data), load_or_create_keyring(data))
    assert_readable(engine, account)
    engine.close()
