"""Append-only writing of session files, one writer per file.

Every entry is written as one complete line with a single ``write`` on a descriptor opened
with ``O_APPEND``, so a line is never interleaved with another process's line. When a file
ends with a torn line (no final newline, e.g. after a crash), a newline is written before the
first append: the fragment stays a separate line that readers skip, instead of fusing with the
new entry.

A write that fails part-way (a full disk, an I/O error) must not leave a fragment for the
next entry to land on: the writer truncates the file back to where the failed write began,
and where it cannot, it terminates the fragment with the next append. Either way the caller
is told with :class:`~ctxmodes.session.errors.SessionWriteError`, and the failed line was
not appended, unless it reached the file whole before its ``fdatasync`` failed and could
not be truncated away (``line_kept``: it then counts as appended).

Durability (:class:`Durability`):

* ``fsync`` (default): the line is on stable storage when ``append`` returns (``fdatasync``;
  a newly created file's directory is synced too);
* ``flush``: the line is in the operating system when ``append`` returns; it survives the
  process dying but not the machine;
* ``none``: lines are buffered in the process and written when the buffer fills, on
  :meth:`SessionWriter.flush` or on close; a crash loses the buffer.

A second writer on the same file, in this process or another, gets
:class:`SessionLockedError`. Pi itself takes no lock, so this only keeps ctxmodes writers apart.

A session file removed while its writer holds it (``rm``, a clean-up of the sessions folder)
would take every later line with it, unseen: before each write the writer checks that its
file still has a name, and where it has none, makes the file again at the same path, holding
everything the removed one held, and goes on writing there. Should another file stand there
by then, it is left alone and the write fails.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import stat
import sys
import weakref
from pathlib import Path
from typing import Final, Protocol

from ctxmodes.session.errors import SessionError, SessionLockedError, SessionWriteError

__all__ = ["Durability", "SessionWriter"]

_BUFFER_LIMIT: Final = 64 * 1024
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_CREATE: Final = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | _CLOEXEC
_COPY_CHUNK: Final = 1 << 20
# Regular files ignore it; it only keeps opening a FIFO from blocking.
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_NOT_A_FILE: Final = "not a regular file"


class Durability(enum.StrEnum):
    """How far an appended line has travelled when ``append`` returns."""

    FSYNC = "fsync"
    FLUSH = "flush"
    NONE = "none"


class _Lock(Protocol):
    def release(self) -> None: ...


class _FlockLock:
    """``flock`` on the session file's own descriptor.

    Chosen over a lock file because it leaves nothing behind in Pi's session directory and the
    kernel drops it when the holder dies, so a killed writer never leaves a stale lock.
    """

    def __init__(self, fd: int, path: Path) -> None:
        import fcntl

        self._fd = fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise SessionLockedError(
                    f"session file is already open for writing elsewhere: {path}"
                ) from None
            raise

    def release(self) -> None:
        import fcntl

        fcntl.flock(self._fd, fcntl.LOCK_UN)


class _SidecarLock:
    """Where ``flock`` does not exist (Windows), a ``<file>.lock`` next to the session."""

    def __init__(self, path: Path) -> None:
        import filelock

        self._lock = filelock.FileLock(f"{path}.lock")
        try:
            self._lock.acquire(timeout=0)
        except filelock.Timeout:
            raise SessionLockedError(
                f"session file is already open for writing elsewhere: {path}"
            ) from None

    def release(self) -> None:
        self._lock.release()


def _take_lock(fd: int, path: Path) -> _Lock:
    if sys.platform == "win32":
        return _SidecarLock(path)
    return _FlockLock(fd, path)


def _sync_directory(directory: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# The system calls that change a session file; fault-injection tests replace them
# (ctxmodes.testing.faults).
_write_fd = os.write
_truncate_fd = os.ftruncate
_datasync = getattr(os, "fdatasync", os.fsync)


class SessionWriter:
    """Appends lines to one session file while holding its write lock."""

    def __init__(self, fd: int, path: Path, durability: Durability, lock: _Lock) -> None:
        self._fd: int | None = fd
        self._path = path
        self._durability = durability
        self._lock = lock
        self._buffer: list[bytes] = []
        self._buffered = 0
        # A torn last line gets its newline together with the first appended line.
        self._prefix = b""
        # A writer dropped without close() still writes its buffer and releases the file.
        self._finalizer = weakref.finalize(self, _abandon, fd, lock, self._buffer)

    @classmethod
    def open_existing(
        cls, path: Path, durability: Durability, *, ends_with_newline: bool | None = None
    ) -> SessionWriter:
        """Lock an existing file for appending.

        ``ends_with_newline`` is what the caller's read of the file found; when omitted the
        last byte is checked. A missing final newline is written together with the first
        appended line, so opening alone never modifies the file.
        """
        try:
            # Non-blocking, so that a FIFO without a reader fails instead of waiting. Read too,
            # for the copy a removed file is made again from.
            fd = os.open(path, os.O_RDWR | os.O_APPEND | _NONBLOCK | _CLOEXEC)
        except OSError as exc:
            # ENXIO: a FIFO that nothing reads.
            reason = _NOT_A_FILE if exc.errno == errno.ENXIO else exc.strerror
            raise SessionError(f"cannot open session file for writing: {path}: {reason}") from None
        writer: SessionWriter | None = None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SessionError(f"cannot open session file for writing: {path}: {_NOT_A_FILE}")
            os.set_blocking(fd, True)
            writer = cls(fd, path, durability, _take_lock(fd, path))
            if ends_with_newline is None:
                ends_with_newline = _ends_with_newline(path)
            if not ends_with_newline:
                writer._prefix = b"\n"
        except BaseException as exc:
            _discard(fd, writer)
            if isinstance(exc, OSError):
                raise SessionError(
                    f"cannot open session file for writing: {path}: {exc.strerror or exc}"
                ) from None
            raise
        return writer

    @classmethod
    def create(cls, path: Path, first_lines: bytes, durability: Durability) -> SessionWriter:
        """Create ``path`` (which must not exist) holding ``first_lines``, and lock it.

        If the first lines cannot be written, the file is removed again: it is new, and
        nothing but this writer has seen it.
        """
        try:
            fd = os.open(path, _CREATE, 0o644)
        except FileExistsError:
            raise SessionError(f"session file already exists: {path}") from None
        except OSError as exc:
            raise SessionError(f"cannot create session file {path}: {exc.strerror}") from None
        writer: SessionWriter | None = None
        try:
            writer = cls(fd, path, durability, _take_lock(fd, path))
            writer._write_now(first_lines)
            if durability is Durability.FSYNC:
                _sync_directory(path.parent)
        except BaseException as exc:
            _discard(fd, writer)
            with contextlib.suppress(OSError):
                path.unlink()
            if isinstance(exc, OSError | SessionWriteError):
                reason = exc.reason if isinstance(exc, SessionWriteError) else exc.strerror
                raise SessionWriteError(f"cannot create session file {path}", reason) from None
            raise
        return writer

    @property
    def path(self) -> Path:
        return self._path

    def append(self, line: bytes) -> None:
        """Append one complete line (ending in ``\\n``) with the configured durability.

        On :class:`SessionError` the line was not appended, and the file ends as it did
        before (or, where it could not be truncated, the next write first terminates what
        was left of the failed one).
        """
        if self._durability is Durability.NONE:
            self._buffer.append(line)
            self._buffered += len(line)
            if self._buffered >= _BUFFER_LIMIT:
                try:
                    self.flush()
                except SessionError:
                    # The earlier lines stay buffered for the next flush; this one is refused.
                    # (Without a sync a written buffer is never reported as failed.)
                    self._buffer.pop()
                    self._buffered -= len(line)
                    raise
            return
        self._write_now(line)

    def flush(self) -> None:
        """Write any buffered lines to the operating system.

        If that fails, the lines stay buffered (the next flush tries again) and
        :class:`SessionError` is raised.
        """
        if self._buffer:
            try:
                self._write_all(b"".join(self._buffer))
            except SessionWriteError as exc:
                self._drop_landed(exc.landed)
                raise
            self._buffer.clear()
            self._buffered = 0

    def _drop_landed(self, landed: int) -> None:
        """Forget the buffered lines that are wholly among the first ``landed`` bytes a
        failed flush left in the file: writing them again would repeat them."""
        done = 0
        for line in self._buffer:
            if landed < len(line):
                break
            landed -= len(line)
            done += 1
        del self._buffer[:done]
        self._buffered = sum(map(len, self._buffer))

    def _write_now(self, data: bytes) -> None:
        self.flush()
        self._write_all(data, sync=self._durability is Durability.FSYNC)

    def _write_all(self, data: bytes, *, sync: bool = False) -> None:
        """Write ``data`` at the end of the file, all of it or (as far as the file is
        concerned) none of it."""
        fd = self._named_fd()
        data = self._prefix + data
        written = 0
        # Where the data begins in the file, asked of the descriptor only when a write falls
        # short or fails: one write call lands in one piece at the end of the file (O_APPEND),
        # after which the descriptor's offset is the end of what it wrote.
        start: int | None = None
        try:
            view = memoryview(data)
            while written < len(data):
                written += _write_fd(fd, view[written:])
                if start is None and written < len(data):
                    # Later pieces may land after another process's line.
                    start = os.lseek(fd, 0, os.SEEK_CUR) - written
            if sync:
                _datasync(fd)
        except OSError as exc:
            if written and start is None:
                start = _offset(fd, written)
            kept = bool(written) and (start is None or not self._roll_back(fd, start, written))
            prefix = len(self._prefix)
            if kept and data[written - 1 : written] != b"\n":
                # The file may end inside the failed line: the next write starts a new one.
                self._prefix = b"\n"
            raise SessionWriteError(
                f"cannot write session file {self._path}",
                exc.strerror or str(exc),
                line_kept=kept and written == len(data),
                landed=max(0, written - prefix) if kept else 0,
            ) from None
        self._prefix = b""

    def _roll_back(self, fd: int, start: int, written: int) -> bool:
        """Remove what a failed write left at the end of the file (``written`` bytes from
        ``start``); False when it stays."""
        try:
            # If someone else appended meanwhile, their bytes are not ours to remove.
            if os.fstat(fd).st_size == start + written:
                _truncate_fd(fd, start)
                return True
        except OSError:
            pass
        return False

    def _require_fd(self) -> int:
        if self._fd is None:
            raise SessionError(f"session writer is closed: {self._path}")
        return self._fd

    def _named_fd(self) -> int:
        """The descriptor to write to: the file's, made again at its path first when it was
        removed meanwhile (see the module's docstring).

        :raises SessionWriteError: it could not be made again; nothing was written.
        """
        fd = self._require_fd()
        if os.fstat(fd).st_nlink > 0:
            return fd
        path = self._path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            again = os.open(path, _CREATE, 0o644)
        except FileExistsError:
            raise SessionWriteError(
                f"cannot write session file {path}",
                "it was removed while the session ran, and another file now stands there",
            ) from None
        except OSError as exc:
            raise SessionWriteError(
                f"cannot make removed session file {path} again", exc.strerror or str(exc)
            ) from None
        try:
            _copy_whole(fd, again)
            lock = _take_lock(again, path) if isinstance(self._lock, _FlockLock) else self._lock
            if self._durability is Durability.FSYNC:
                _datasync(again)
                _sync_directory(path.parent)
        except BaseException as exc:
            os.close(again)
            with contextlib.suppress(OSError):
                path.unlink()
            if isinstance(exc, OSError):
                raise SessionWriteError(
                    f"cannot make removed session file {path} again", exc.strerror or str(exc)
                ) from None
            raise
        self._finalizer.detach()
        if lock is not self._lock:
            with contextlib.suppress(OSError):
                self._lock.release()
        os.close(fd)
        self._fd, self._lock = again, lock
        self._finalizer = weakref.finalize(self, _abandon, again, lock, self._buffer)
        return again

    def close(self) -> None:
        """Flush, release the lock and close the file. Safe to call twice."""
        if self._fd is None:
            return
        self._finalizer.detach()
        try:
            self.flush()
        finally:
            fd, self._fd = self._fd, None
            try:
                self._lock.release()
            finally:
                os.close(fd)


def _copy_whole(source: int, target: int) -> None:
    """Write everything the file of ``source`` holds to ``target``."""
    offset = 0
    while chunk := os.pread(source, _COPY_CHUNK, offset):
        offset += len(chunk)
        while chunk:
            chunk = chunk[_write_fd(target, chunk) :]


def _offset(fd: int, written: int) -> int | None:
    """Where a write of ``written`` bytes that landed in one piece began (``None`` when the
    descriptor cannot say)."""
    try:
        return os.lseek(fd, 0, os.SEEK_CUR) - written
    except OSError:
        return None


def _discard(fd: int, writer: SessionWriter | None) -> None:
    """Undo a half-made writer: its finalizer must never run on a descriptor number that
    may be reused once this one is closed."""
    try:
        if writer is not None:
            writer._finalizer.detach()
            writer._fd = None
            with contextlib.suppress(OSError):
                writer._lock.release()
    finally:
        os.close(fd)


def _abandon(fd: int, lock: _Lock, buffer: list[bytes]) -> None:
    try:
        data = b"".join(buffer)
        while data:
            data = data[os.write(fd, data) :]
    finally:
        try:
            lock.release()
        finally:
            os.close(fd)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as stream:
        stream.seek(0, os.SEEK_END)
        if stream.tell() == 0:
            return True
        stream.seek(-1, os.SEEK_END)
        return stream.read(1) == b"\n"
