"""Group commit on SQLite: calls that a worker runs one after another share one transaction
and one sync, and none of them is answered before that commit is on disk."""

import json
import threading

from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.sqlite_storage import SqliteStorage
from ctxmodes_remote.service.workers import FairWorker

KEYS = KeyRing([b"g" * 32])
CONTEXT = {"session_id": "s1", "current_agent_name": "/root"}


def write(engine, account, path, text):
    body = {"path": path, "text": text, "context": CONTEXT}
    return lambda: engine.alpha(account, "notes", "write_file", body, encrypted_arguments=False)


def opened(account, answer):
    return json.loads(KEYS.decrypt(account.account_id, answer["encrypted_output"]))


def test_queued_writes_share_a_commit_and_are_answered_once_it_is_on_disk(tmp_path):
    path = tmp_path / "serve.sqlite3"
    storage = SqliteStorage(path)
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, KEYS)
    assert engine.group_commits()
    commits = []
    commit = engine.commit_writes
    engine.commit_writes = lambda: (commits.append(1), commit())[1]
    # Another process's view of the file: what it sees is committed.
    other = SqliteStorage(path)
    seen_when_answered = []
    worker = FairWorker("test-worker", engine)
    gate = threading.Event()
    worker.submit("", gate.wait)
    futures = [
        worker.submit("alice", write(engine, account, f"n{n}.md", f"{n}")) for n in range(10)
    ]
    for future in futures:
        future.add_done_callback(
            lambda _: seen_when_answered.append(len(other.note_events(account.account_id, "s1")))
        )
    gate.set()
    answers = [opened(account, future.result(timeout=30)) for future in futures]
    worker.close()
    assert [answer["file"]["path"] for answer in answers] == [
        f"/root/notes/n{n}.md" for n in range(10)
    ]
    # Every answer left after its own write, and the ones before it, were committed.
    assert all(seen >= n + 1 for n, seen in enumerate(seen_when_answered))
    assert 1 <= len(commits) < 10
    # Calls that write nothing are answered at once, without a commit.
    reads = len(commits)
    read = {"path": "n1.md", "context": CONTEXT}
    assert (
        opened(
            account, engine.alpha(account, "notes", "read_file", read, encrypted_arguments=False)
        )["file"]["content"]
        == "1"
    )
    assert not engine.writes_pending()
    assert len(commits) == reads
    other.close()
    storage.close()
