"""The engine over shared storage: several service processes on one database stay coherent
(reads see every process's writes at once, in storage order)."""

import json

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.sqlite_storage import SqliteStorage
from ctxmodes_remote.service.storage import RecordedItem

KEYS = KeyRing([b"e" * 32])
CONTEXT = {"session_id": "s1", "current_agent_name": "/root"}


def engines(tmp_path, count=2):
    path = tmp_path / "shared.sqlite3"
    first = SqliteStorage(path)
    account = create_token(first, "alice").account
    return account, [ServiceEngine(first, KEYS)] + [
        ServiceEngine(SqliteStorage(path), KEYS) for _ in range(count - 1)
    ]


def call(engine, account, family, operation, **arguments):
    answer = engine.alpha(
        account, family, operation, {**arguments, "context": CONTEXT}, encrypted_arguments=False
    )
    return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))


def test_a_write_through_one_process_is_read_through_another_at_once(tmp_path):
    account, (a, b) = engines(tmp_path)
    assert call(b, account, "notes", "read_file", path="n.md") == {
        "source": "ctxmodes-serve",
        "file": None,
    }
    call(a, account, "notes", "write_file", path="n.md", text="one")
    assert call(b, account, "notes", "read_file", path="n.md")["file"]["content"] == "one"


def test_interleaved_appends_keep_storage_order_everywhere(tmp_path):
    account, (a, b) = engines(tmp_path)
    call(a, account, "notes", "append_to_file", path="log.md", text="a1 ")
    call(b, account, "notes", "append_to_file", path="log.md", text="b1 ")
    call(a, account, "notes", "append_to_file", path="log.md", text="a2 ")
    for engine in (a, b):
        assert call(engine, account, "notes", "read_file", path="log.md")["file"]["content"] == (
            "a1 b1 a2 "
        )
    # Other sessions' writes in between do not disturb a session's own sequence.
    other = {"session_id": "s2", "current_agent_name": "/root"}
    a.alpha(
        account,
        "notes",
        "write_file",
        {"path": "x", "text": "t", "context": other},
        encrypted_arguments=False,
    )
    call(a, account, "notes", "append_to_file", path="log.md", text="a3")
    assert call(b, account, "notes", "read_file", path="log.md")["file"]["content"] == (
        "a1 b1 a2 a3"
    )


def test_history_recorded_by_one_process_is_searchable_in_another(tmp_path):
    account, (a, b) = engines(tmp_path)
    assert call(b, account, "history", "list_windows")["windows"] == []
    a.record(account, "s1", "/root", [RecordedItem("w0", "m1", "user", "find the marker")])
    found = call(b, account, "history", "search_contents", query="marker")
    assert [(i["window_id"], i["item_id"]) for i in found["items"]] == [("w0", "m1")]


def test_agents_have_their_own_history_and_share_notes(tmp_path):
    account, (engine,) = engines(tmp_path, count=1)
    engine.record(account, "s1", "/root", [RecordedItem("w0", "r1", "user", "root task")])
    engine.record(account, "s1", "/root/worker", [RecordedItem("w9", "k1", "user", "child task")])
    worker = {"session_id": "s1", "current_agent_name": "/root/worker"}

    def as_worker(family, operation, **arguments):
        answer = engine.alpha(
            account, family, operation, {**arguments, "context": worker}, encrypted_arguments=False
        )
        return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))

    assert [w["window_id"] for w in as_worker("history", "list_windows")["windows"]] == ["w9"]
    # Absolute and relative agent names, as Codex specifies them.
    assert [
        w["window_id"] for w in as_worker("history", "list_windows", agent_name="/root")["windows"]
    ] == ["w0"]
    relative = call(engine, account, "history", "list_windows", agent_name="worker")
    assert [w["window_id"] for w in relative["windows"]] == ["w9"]
    assert call(engine, account, "history", "list_windows", agent_name="../x")["windows"] == []
    as_worker("notes", "write_file", path="plan.md", text="child plan")
    shared = call(engine, account, "notes", "read_file", path="/root/worker/notes/plan.md")
    assert shared["file"]["content"] == "child plan"
