"""Faults around the service: a full disk under its database, and an upstream model that
stops answering. Errors are clear, nothing acknowledged is lost, nothing is left running."""

import json
import os
import sqlite3
import subprocess
import threading

import pytest
from support.service_rig import RecordingProvider, turn_headers

from ctxmodes.providers.script import Script
from ctxmodes_remote.service.sealed_storage import SealedStorage
from ctxmodes_remote.service.sqlite_storage import SqliteStorage

pytestmark = pytest.mark.faults


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("a full disk is simulated with a small tmpfs, which needs root to mount")
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "--lazy", str(mount_point)], check=True)


def test_a_full_disk_refuses_writes_clearly_and_keeps_every_acknowledged_one(
    make_service, small_disk, caplog
):
    database = small_disk / "data" / "serve.sqlite3"
    storage = SqliteStorage(database)
    service = make_service(storage=storage)
    free = os.statvfs(small_disk)
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 256 * 1024))

    acknowledged: dict[str, str] = {}
    refused = None
    for n in range(200):
        path, text = f"n{n}.md", f"note {n} " + "x" * 16_000
        reply = service.alpha("notes", "write_file", {"path": path, "text": text})
        if reply.status != 200:
            refused = (path, reply)
            break
        assert "error" not in service.opened(reply)
        acknowledged[path] = text
    assert refused is not None, "the disk never filled"
    assert acknowledged
    path, reply = refused
    assert reply.status == 503
    error = reply.json()["error"]
    assert error["code"] == "storage_unavailable"
    # The client gets the generic one-line error; the operator's log says why.
    assert error["message"] == "the service's storage is unavailable"
    assert "database or disk is full" in caplog.text

    # Reads go on while the disk is full; the refused write left nothing behind.
    for name, text in acknowledged.items():
        assert service.call("notes", "read_file", {"path": name})["file"]["content"] == text
    assert service.call("notes", "read_file", {"path": path})["file"] is None

    # Space again: writes work, and the file reopened holds every acknowledged note.
    filler.unlink()
    service.call("notes", "write_file", {"path": path, "text": "after"})
    storage.close()
    reopened = SealedStorage(SqliteStorage(database), service.keyring)
    events = reopened.note_events(service.alice.account_id, "s1")
    assert [event.path for _, event in events] == [
        f"/root/notes/{name}" for name in (*acknowledged, path)
    ]
    assert [event.text for _, event in events][:-1] == list(acknowledged.values())
    reopened.close()
    with sqlite3.connect(database) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)


class SilentUpstream(RecordingProvider):
    """A model that never sends anything; it returns as soon as its call is aborted."""

    def __init__(self):
        super().__init__(Script.model_validate({"responses": []}))
        self.finished = threading.Semaphore(0)

    def stream(self, request, signal):
        self.requests.append(request)
        try:
            signal.wait(60)
            signal.raise_if_aborted()
            yield from ()
        finally:
            self.finished.release()


def _open_sockets():
    names = (os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd"))
    return sum(1 for name in _readable(names) if name.startswith("socket:"))


def _readable(names):
    while True:
        try:
            yield next(names)
        except StopIteration:
            return
        except OSError:  # the descriptor closed while listing
            continue


def _settled(count, expected):
    """Waits (bounded) for a count that drops as the server closes finished connections."""
    done = threading.Event()
    for _ in range(200):
        if count() <= expected:
            return True
        done.wait(0.05)
    return False


def test_a_silent_upstream_times_out_to_the_client_and_leaves_nothing_running(make_service):
    upstream = SilentUpstream()
    service = make_service(provider=upstream, upstream_idle_timeout_s=0.3)

    def turn(window):
        reply = service.responses({"input": []}, turn_headers("s1", window))
        assert reply.status == 200
        return reply.events()

    # One turn first, so the pools have started the threads they keep.
    turn("w0")
    assert upstream.finished.acquire(timeout=30)
    threads = threading.active_count()
    sockets = _open_sockets()
    for n in range(1, 4):
        events = turn(f"w{n}")
        assert events[-1]["type"] == "response.failed"
        message = events[-1]["response"]["error"]["message"]
        assert message == "upstream model timed out: nothing for 0.3 s"
        # The upstream call was aborted and returned.
        assert upstream.finished.acquire(timeout=30)
    assert len(upstream.requests) == 4
    assert threading.active_count() == threads
    upstream_threads = [t for t in threading.enumerate() if t.name.startswith("ctxmodes-upstream")]
    assert len(upstream_threads) == 1
    assert _settled(_open_sockets, sockets), (_open_sockets(), sockets)


def test_a_group_that_meets_a_full_disk_is_answered_with_the_failure_and_forgotten(
    small_disk,
):
    """Writes held for one commit: those refused for the full disk are neither acknowledged
    nor kept in memory, those acknowledged are on disk, and the session reads as the file."""
    from ctxmodes_remote.service.accounts import create_token
    from ctxmodes_remote.service.crypto import KeyRing
    from ctxmodes_remote.service.engine import ServiceEngine
    from ctxmodes_remote.service.storage import StorageUnavailableError
    from ctxmodes_remote.service.workers import FairWorker

    keys = KeyRing([b"f" * 32])
    database = small_disk / "serve.sqlite3"
    storage = SqliteStorage(database)
    account = create_token(storage, "alice").account
    engine = ServiceEngine(storage, keys)
    engine.group_commits()
    worker = FairWorker("test-worker", engine)

    def call(operation, **arguments):
        body = {**arguments, "context": {"session_id": "s1", "current_agent_name": "/root"}}
        return lambda: engine.alpha(account, "notes", operation, body, encrypted_arguments=False)

    def opened(answer):
        return json.loads(keys.decrypt(account.account_id, answer["encrypted_output"]))

    worker.submit("alice", call("write_file", path="first.md", text="kept")).result(timeout=30)
    free = os.statvfs(small_disk)
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 256 * 1024))
    gate = threading.Event()
    worker.submit("", gate.wait)
    texts = {f"n{n}.md": f"note {n} " + "x" * 40_000 for n in range(20)}
    futures = {
        path: worker.submit("alice", call("write_file", path=path, text=text))
        for path, text in texts.items()
    }
    gate.set()
    acknowledged, refused = [], []
    for path, future in futures.items():
        try:
            future.result(timeout=60)
            acknowledged.append(path)
        except StorageUnavailableError:
            refused.append(path)
    assert refused, "the disk never filled"
    filler.unlink()

    def reads():
        return {
            path: (opened(worker.submit("alice", call("read_file", path=path)).result(30))["file"])
            for path in ["first.md", *texts]
        }

    in_memory = reads()
    assert in_memory["first.md"]["content"] == "kept"
    for path in texts:
        expected = texts[path] if path in acknowledged else None
        assert (in_memory[path] or {}).get("content") == expected, path
    worker.close()
    storage.close()
    # Another process reading the file finds exactly what was acknowledged.
    reopened = SealedStorage(SqliteStorage(database), keys)
    stored = {event.path for _, event in reopened.note_events(account.account_id, "s1")}
    assert stored == {f"/root/notes/{path}" for path in ["first.md", *acknowledged]}
    reopened.close()
