"""Note paths at the service (SQLite and Postgres): invisible format characters are refused
with a clear error the model reads, composed and decomposed spellings are one note, and the
thread hint (developer role on the client) shows no such character raw."""

import json

import pytest

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import ServiceEngine

KEYS = KeyRing([b"p" * 32])
CONTEXT = {"session_id": "s1", "current_agent_name": "/root"}


@pytest.fixture
def engine(backend):
    return ServiceEngine(backend, KEYS), create_token(backend, "alice").account


def call(engine, account, operation, **arguments):
    answer = engine.alpha(
        account, "notes", operation, {**arguments, "context": CONTEXT}, encrypted_arguments=False
    )
    return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))


@pytest.mark.parametrize("character", ["\u202e", "\u2066", "\u200b", "\u200d", "\ufeff"])
def test_format_characters_in_paths_are_refused(engine, character):
    engine, account = engine
    result = call(engine, account, "write_file", path=f"report{character}txt.md", text="x")
    assert "invisible formatting characters" in result["error"]
    assert call(engine, account, "list_files_by_prefix")["files"] == []
    hint = engine.thread_hint(account, engine_context())["text"]
    assert character not in hint


def engine_context():
    from ctxmodes_remote.service.engine import parse_context

    return parse_context(CONTEXT)


def test_composed_and_decomposed_spellings_are_one_note(engine):
    engine, account = engine
    call(engine, account, "write_file", path="caf\u00e9.md", text="one")
    call(engine, account, "append_to_file", path="cafe\u0301.md", text=" two")
    files = call(engine, account, "list_files_by_prefix")["files"]
    assert [entry["path"] for entry in files] == ["/root/notes/caf\u00e9.md"]
    read = call(engine, account, "read_file", path="cafe\u0301.md")
    assert read["file"]["content"] == "one two"
