"""Group commit on SQLite: calls that a worker runs one after another share one transaction
and one sync, and none of them is answered before that commit is on disk."""

import json
import threading
import time

import pytest

from ctxmodes_remote.service import workers
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


def _grouping_engine(tmp_path):
    storage = SqliteStorage(tmp_path / "serve.sqlite3")
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, KEYS)
    assert engine.group_commits()
    commits = []
    commit = engine.commit_writes
    engine.commit_writes = lambda: (commits.append(1), commit())[1]
    return storage, account, engine, commits


def session_write(engine, account, session, path):
    body = {"path": path, "text": "x", "context": {"session_id": session}}
    return lambda: engine.alpha(account, "notes", "write_file", body, encrypted_arguments=False)


def submit_in_one_group(worker, engine, account, sessions, path):
    """One write of each of ``sessions``, held back until all are queued: one group; their
    futures."""
    gate = threading.Event()
    worker.submit("", gate.wait)
    futures = [
        worker.submit("alice", session_write(engine, account, s, path), session=("a", s))
        for s in sessions
    ]
    gate.set()
    return futures


def answer_two_sessions_in_one_group(worker, engine, account) -> None:
    """Sessions s1 and s2 each write once, in one group, and are answered."""
    for future in submit_in_one_group(worker, engine, account, ("s1", "s2"), "a.md"):
        future.result(timeout=30)


def wait_far_beyond_any_scheduling_delay(monkeypatch) -> None:
    """Group bounds so long that a test measures whether the worker waits, not how long."""
    monkeypatch.setattr(workers, "GROUP_WAIT_S", 30.0)
    monkeypatch.setattr(workers, "GROUP_SECONDS", 30.0)
    monkeypatch.setattr(workers, "RECENT_SESSION_S", 60.0)


@pytest.mark.slow  # waits out the group commit's timing
def test_a_group_waits_for_the_next_call_of_a_session_it_answered_lately(tmp_path, monkeypatch):
    wait_far_beyond_any_scheduling_delay(monkeypatch)
    storage, account, engine, commits = _grouping_engine(tmp_path)
    worker = FairWorker("test-worker", engine)
    answer_two_sessions_in_one_group(worker, engine, account)
    assert len(commits) == 1
    # s1 calls again; s2, answered with it, has not yet: its call is waited for.
    again = worker.submit(
        "alice", session_write(engine, account, "s1", "b.md"), session=("a", "s1")
    )
    with pytest.raises(TimeoutError):
        again.result(timeout=0.5)
    assert engine.writes_pending()
    late = worker.submit("alice", session_write(engine, account, "s2", "b.md"), session=("a", "s2"))
    again.result(timeout=30)
    late.result(timeout=30)
    assert len(commits) == 2
    worker.close()
    storage.close()


def test_a_session_alone_is_answered_without_waiting(tmp_path, monkeypatch):
    wait_far_beyond_any_scheduling_delay(monkeypatch)
    storage, account, engine, commits = _grouping_engine(tmp_path)
    worker = FairWorker("test-worker", engine)
    for n in range(3):
        call = session_write(engine, account, "s1", f"n{n}.md")
        # Its own session is the only one answered lately, and its call is in the group.
        worker.submit("alice", call, session=("a", "s1")).result(timeout=10)
    assert len(commits) == 3
    worker.close()
    storage.close()


def test_a_session_that_stops_calling_delays_a_commit_by_the_bound_only(tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "GROUP_WAIT_S", 0.2)
    monkeypatch.setattr(workers, "RECENT_SESSION_S", 60.0)
    storage, account, engine, commits = _grouping_engine(tmp_path)
    worker = FairWorker("test-worker", engine)
    answer_two_sessions_in_one_group(worker, engine, account)
    started = time.perf_counter()
    worker.submit(
        "alice", session_write(engine, account, "s1", "b.md"), session=("a", "s1")
    ).result(timeout=30)
    # Held for at most the group's age bound (GROUP_SECONDS, 5 ms), never for s2.
    assert time.perf_counter() - started < 0.15
    assert len(commits) == 2
    worker.close()
    storage.close()


def test_a_group_of_the_target_size_waits_for_nobody(tmp_path, monkeypatch):
    wait_far_beyond_any_scheduling_delay(monkeypatch)
    storage, account, engine, commits = _grouping_engine(tmp_path)
    worker = FairWorker("test-worker", engine)
    sessions = [f"s{n}" for n in range(workers.GROUP_TARGET + 1)]
    for future in submit_in_one_group(worker, engine, account, sessions, "a.md"):
        future.result(timeout=30)
    # All but one call again: the group is big enough, the last session is not waited for.
    for future in submit_in_one_group(worker, engine, account, sessions[:-1], "b.md"):
        future.result(timeout=10)
    assert len(commits) == 2
    worker.close()
    storage.close()
