"""An issued token is shown once and never stored: the service keeps only its SHA-256."""

import hashlib
import sqlite3

import pytest
from support.serve_process import create_token

pytestmark = pytest.mark.slow  # a real `ctxmodes serve token create` process


def test_only_the_tokens_hash_is_stored(tmp_path):
    data = tmp_path / "data"
    token = create_token(data, "alice")
    digest = hashlib.sha256(token.encode()).hexdigest()
    stored = b"".join(path.read_bytes() for path in data.iterdir() if path.is_file())
    assert token.encode() not in stored
    assert token.split(".")[2].encode() not in stored  # not even the signature part
    (database,) = data.glob("*.sqlite3")
    with sqlite3.connect(database) as connection:
        dumped = "\n".join(connection.iterdump())
    assert digest in dumped
    assert token not in dumped
