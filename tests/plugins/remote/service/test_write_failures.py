"""A history write that fails leaves the engine's memory equal to storage: the resend of the
same items is recorded, not dropped as already seen (SQLite and Postgres)."""

import json

import pytest

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.storage import RecordedItem, StorageUnavailableError

KEYS = KeyRing([b"w" * 32])


def test_a_failed_history_write_is_recorded_when_resent(backend, monkeypatch):
    engine = ServiceEngine(backend, KEYS)
    account = create_token(backend, "alice").account
    first = [RecordedItem("w0", "m1", "user", "first turn")]
    assert engine.record(account, "s1", "/root", first) == 1
    turn = [*first, RecordedItem("w0", "m2", "user", "the turn that fails")]

    def fail(*args):
        raise StorageUnavailableError("the database failed: disk I/O error")

    with monkeypatch.context() as patched:
        patched.setattr(backend, "append_history_items", fail)
        with pytest.raises(StorageUnavailableError):
            engine.record(account, "s1", "/root", turn)
    # Nothing of it is in memory: the listing shows storage's items only.
    listed = engine.alpha(
        account,
        "history",
        "list_items",
        {"context": {"session_id": "s1", "current_agent_name": "/root"}},
        encrypted_arguments=False,
    )
    items = json.loads(KEYS.decrypt(account.account_id, listed["encrypted_output"]))["items"]
    assert [item["item_id"] for item in items] == ["m1"]
    # The client resends the turn: it is recorded, and survives a restart.
    assert engine.record(account, "s1", "/root", turn) == 1
    restarted = ServiceEngine(backend, KEYS)
    stored = restarted._storage.history_items(account.account_id, "s1", "/root")
    assert [item.item_key for _, item in stored] == ["m1", "m2"]
