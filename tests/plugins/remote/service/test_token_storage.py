"""An issued token is shown once and never stored: the service keeps only its SHA-256, in a
SQLite file as in Postgres."""

import hashlib
import sqlite3

import pytest
from support.serve_process import ctxmodes

pytestmark = pytest.mark.slow  # real `ctxmodes serve token create` processes


def issue(data, *database):
    """A token from `token create`, checked to be printed once: on standard output alone."""
    made = ctxmodes("serve", "token", "create", "alice", "--data", str(data), *database)
    token = made.stdout.strip()
    assert made.stdout == f"{token}\n"
    assert token.split(".")[2] not in made.stderr
    return token


def assert_only_the_hash(token, stored_bytes, stored_values):
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert token.encode() not in stored_bytes
    assert token.split(".")[2].encode() not in stored_bytes  # not even the signature part
    assert digest in stored_values
    assert not any(token.split(".")[2] in str(value) for value in stored_values)


def test_only_the_tokens_hash_is_stored(tmp_path):
    data = tmp_path / "data"
    token = issue(data)
    stored = b"".join(path.read_bytes() for path in data.iterdir() if path.is_file())
    (database,) = data.glob("*.sqlite3")
    with sqlite3.connect(database) as connection:
        # Every column of every row of the table that holds tokens.
        rows = connection.execute("SELECT * FROM tokens").fetchall()
    connection.close()
    assert_only_the_hash(token, stored, [value for row in rows for value in row])


def test_only_the_tokens_hash_is_stored_in_postgres(tmp_path, postgres_server, postgres_url):
    import psycopg

    data = tmp_path / "data"
    token = issue(data, "--database", postgres_url)
    # The data directory holds the key file only; the database, as a dump shows it all.
    stored = postgres_server.dump(postgres_url)
    stored += b"".join(path.read_bytes() for path in data.iterdir() if path.is_file())
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute("SELECT * FROM tokens").fetchall()
    assert_only_the_hash(token, stored, [value for row in rows for value in row])
