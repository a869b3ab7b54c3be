"""Writes that fail part-way (a full disk, an I/O error) lose no acknowledged entry, and a
writer that fails to open leaves no trace on the descriptors of others."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxmodes.session import writer as writer_module
from ctxmodes.session.errors import SessionError, SessionLockedError, SessionWriteError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability, SessionWriter
from ctxmodes.testing.faults import FaultyDisk, run_campaign

pytestmark = pytest.mark.faults

#: In the suite: 120 injected faults (bench/write_faults.py injects thousands).
SUITE_FAULTS = 60


def user(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def reopened_ids(path: Path) -> tuple[list[tuple[str, str | None]], int]:
    """(id, parent id) of every entry on reopening, and the number of skipped lines."""
    with SessionManager.open(path, read_only=True) as manager:
        return [(e.id, e.parent_id) for e in manager.get_entries()], len(manager.skipped_lines)


@pytest.fixture
def disk() -> FaultyDisk:
    faulty = FaultyDisk(random.Random(7))
    with faulty.active():
        yield faulty


def test_a_short_write_is_truncated_away_and_the_next_entry_is_intact(
    tmp_path: Path, disk: FaultyDisk, pi
) -> None:
    path = tmp_path / "s.jsonl"
    with SessionManager.open(path) as manager:
        first = manager.append_message(user("kept"))
        disk.arm()
        with pytest.raises(SessionWriteError, match="cannot write session file"):
            manager.append_message(user("refused " * 100))
        assert [e.id for e in manager.get_entries()] == [first], "memory equals the file"
        second = manager.append_message(user("after the fault"))
    assert disk.injected["short_write"] == 1
    assert reopened_ids(path) == ([(first, None), (second, first)], 0)
    assert path.read_bytes().endswith(b"\n")
    (seen,) = pi.open_many([{"file": str(path)}])
    assert seen["branchIds"] == [first, second]


def test_a_fragment_that_cannot_be_truncated_is_terminated_by_the_next_append(
    tmp_path: Path, disk: FaultyDisk, pi
) -> None:
    path = tmp_path / "s.jsonl"
    with SessionManager.open(path) as manager:
        first = manager.append_message(user("kept"))
        disk.refuse_truncate = True
        disk.arm()
        with pytest.raises(SessionWriteError):
            manager.append_message(user("torn " * 100))
        disk.refuse_truncate = False
        second = manager.append_message(user("after the fault"))
    # The fragment is a line of its own that readers skip; nothing acknowledged is lost.
    assert reopened_ids(path) == ([(first, None), (second, first)], 1)
    (seen,) = pi.open_many([{"file": str(path)}])
    assert seen["branchIds"] == [first, second]


def test_a_line_left_whole_by_a_failed_sync_counts_as_appended(
    tmp_path: Path, disk: FaultyDisk
) -> None:
    path = tmp_path / "s.jsonl"
    with SessionManager.open(path) as manager:
        first = manager.append_message(user("kept"))
        disk.refuse_truncate = True
        disk.arm(sync=True)
        with pytest.raises(SessionWriteError) as failure:
            manager.append_message(user("written, not synced"))
        assert failure.value.line_kept
        disk.refuse_truncate = False
        held = [e.id for e in manager.get_entries()]
        third = manager.append_message(user("next"))
    assert len(held) == 2
    assert reopened_ids(path) == ([(first, None), (held[1], first), (third, held[1])], 0)


def test_a_failed_sync_that_can_be_truncated_refuses_the_line(
    tmp_path: Path, disk: FaultyDisk
) -> None:
    path = tmp_path / "s.jsonl"
    with SessionManager.open(path) as manager:
        first = manager.append_message(user("kept"))
        disk.arm(sync=True)
        with pytest.raises(SessionWriteError) as failure:
            manager.append_message(user("not synced"))
        assert not failure.value.line_kept
        second = manager.append_message(user("next"))
    assert reopened_ids(path) == ([(first, None), (second, first)], 0)


def test_a_failed_sync_never_truncates_a_line_another_process_appended_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pi takes no lock: its line may land right after ours before our sync fails.
    path = tmp_path / "s.jsonl"
    with SessionManager.open(path) as manager:
        first = manager.append_message(user("kept"))
        theirs = b'{"type":"custom","customType":"pi","id":"0000beef","parentId":null}\n'

        def another_process_appends_then_sync_fails(fd: int) -> None:
            other = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(other, theirs)
            finally:
                os.close(other)
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        monkeypatch.setattr(writer_module, "_datasync", another_process_appends_then_sync_fails)
        with pytest.raises(SessionWriteError) as failure:
            manager.append_message(user("written, not synced"))
        assert failure.value.line_kept
        second = manager.get_leaf_id()
    lines = path.read_bytes().splitlines(keepends=True)
    assert lines[-1] == theirs
    assert reopened_ids(path)[0][:3] == [(first, None), (second, first), ("0000beef", None)]


def test_a_failed_buffer_flush_keeps_the_buffer_and_refuses_the_new_line(
    tmp_path: Path, disk: FaultyDisk
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")  # opened with its header on disk: the buffered lines come next
    with SessionManager.open(path, durability=Durability.NONE) as manager:
        buffered = [manager.append_message(user(f"b{n}")) for n in range(3)]
        disk.arm()
        with pytest.raises(SessionWriteError):
            # Big enough to fill the buffer: the flush it triggers fails part-way.
            manager.append_message(user("x" * 70_000))
        assert [e.id for e in manager.get_entries()] == buffered
        last = manager.append_message(user("after"))
    ids, skipped = reopened_ids(path)
    assert [i for i, _ in ids] == [*buffered, last]
    assert skipped == 0


def test_a_failed_first_write_removes_the_new_file(tmp_path: Path, disk: FaultyDisk) -> None:
    path = tmp_path / "new.jsonl"
    disk.arm()
    with pytest.raises(SessionError, match="cannot create session file"):
        SessionWriter.create(path, b'{"type":"session"}\n' * 10, Durability.FSYNC)
    assert not path.exists()


@pytest.mark.parametrize("durability", [Durability.FSYNC, Durability.FLUSH])
def test_injected_faults_never_lose_an_acknowledged_entry(
    tmp_path: Path, durability: Durability
) -> None:
    report = run_campaign(tmp_path, faults=SUITE_FAULTS, seed=20, durability=durability)
    assert report.problems == []
    assert report.faults == SUITE_FAULTS
    assert report.refused + report.kept == SUITE_FAULTS
    assert report.fragments_left > 0, "both recovery paths were taken"


# ----------------------------------------------------------------- a real full disk


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "64k"):
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_tmpfs_loses_no_acknowledged_entry(tmp_path: Path, pi) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        path = disk / "s.jsonl"
        filler = disk / "filler"
        acknowledged: list[str] = []
        with SessionManager.open(path) as manager:
            acknowledged.append(manager.append_message(user("first")))
            with filler.open("wb", buffering=0) as stream, contextlib.suppress(OSError):
                while True:
                    stream.write(b"\0" * 4096)
            reasons = []
            for n in range(50):
                try:
                    acknowledged.append(manager.append_message(user(f"{n} " * 300)))
                except SessionWriteError as exc:
                    reasons.append(exc.reason)
            assert reasons
            assert set(reasons) == {"No space left on device"}
            assert [e.id for e in manager.get_entries()] == acknowledged
            filler.unlink()
            acknowledged.append(manager.append_message(user("after freeing space")))
        ids, skipped = reopened_ids(path)
        assert [i for i, _ in ids] == acknowledged
        assert [p for _, p in ids] == [None, *acknowledged[:-1]]
        assert skipped == 0
        (seen,) = pi.open_many([{"file": str(path)}])
        assert seen["branchIds"] == acknowledged


# ------------------------------------------------------------- failed opens and races


@pytest.mark.parametrize(
    "error",
    [OSError(errno.EINVAL, "Invalid argument"), PermissionError(errno.EACCES, "Permission denied")],
)
def test_a_failed_open_never_closes_a_descriptor_it_no_longer_owns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    target = tmp_path / "unreadable.jsonl"
    other = tmp_path / "other.jsonl"
    for path in (target, other):
        path.write_bytes(b'{"type":"session"}\n')
    opened: list[int] = []
    real_open = os.open

    def recording_open(*args, **kwargs):
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    def fail(path: Path) -> bool:
        # A fresh exception: the parameter object would keep its traceback (and the writer).
        raise type(error)(*error.args)

    monkeypatch.setattr(writer_module, "_ends_with_newline", fail)
    monkeypatch.setattr(writer_module.os, "open", recording_open)
    # The traceback keeps the failed writer alive while its descriptor number is reused.
    with pytest.raises((SessionError, OSError)) as raised:
        SessionWriter.open_existing(target, Durability.FSYNC)
    monkeypatch.undo()
    survivor = SessionWriter.open_existing(other, Durability.FSYNC)
    try:
        assert survivor._fd == opened[-1], "the test needs the number reused"
        kind, message = raised.type, str(raised.value)
        del raised
        gc.collect()
        os.fstat(opened[-1])  # still open
        with pytest.raises(SessionLockedError):
            SessionWriter.open_existing(other, Durability.FSYNC)
        survivor.append(b'{"still":"writable"}\n')
    finally:
        survivor.close()
    assert issubclass(kind, SessionError)
    assert "cannot open session file for writing" in message
    # The failed file was never locked for good either.
    SessionWriter.open_existing(target, Durability.FSYNC, ends_with_newline=True).close()


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs /proc")
def test_a_file_whose_last_byte_cannot_be_read_is_a_session_error() -> None:
    if not os.access("/proc/version", os.W_OK):
        pytest.skip("/proc/version cannot be opened for writing here")
    with pytest.raises(SessionError, match="cannot open session file for writing"):
        SessionWriter.open_existing(Path("/proc/version"), Durability.FSYNC)


def test_two_managers_on_a_new_path_the_second_is_refused_at_its_first_message(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sub" / "new.jsonl"
    with SessionManager.open(path) as first, SessionManager.open(path) as second:
        first.append_message(user("only writer"))
        with pytest.raises(SessionError):
            second.append_message(user("too late"))
        with pytest.raises(SessionLockedError):
            SessionManager.open(path)
    ids, _ = reopened_ids(path)
    assert len(ids) == 1


def test_a_session_directory_that_cannot_be_created_is_a_session_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    opened = SessionManager.open(blocker / "sessions" / "s.jsonl")
    with pytest.raises(SessionError, match="cannot create session directory"):
        opened.append_message(user("q"))
    manager = SessionManager.create(tmp_path, blocker / "sessions")
    with pytest.raises(SessionError, match="cannot create session directory"):
        manager.append_message(user("q"))
    assert list(manager.get_entries()) == []


def test_buffered_lines_a_failed_flush_left_whole_are_not_written_twice(
    tmp_path: Path, disk: FaultyDisk
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")  # opened with its header on disk: the buffered lines come next
    with SessionManager.open(path, durability=Durability.NONE) as manager:
        buffered = [manager.append_message(user(f"b{n} " + "y" * 30_000)) for n in range(2)]
        disk.refuse_truncate = True
        # The flush puts the first line and part of the second on disk, then fails.
        disk.fail_after(40_000)
        with pytest.raises(SessionWriteError):
            manager.append_message(user("x" * 10_000))
        disk.refuse_truncate = False
        last = manager.append_message(user("after"))
    ids, skipped = reopened_ids(path)
    assert [i for i, _ in ids] == [*buffered, last], "each entry once"
    assert skipped == 1, "the torn copy of the second line"
