"""Plumbing shared by the persistent shell and the notebook worker.

Both run a long-lived child in its own process group, read its merged stdout/stderr from one
pipe and learn that a request finished from a second, private control pipe (so nothing a
command prints can be mistaken for the end of the command). :func:`pump` waits for the
control message while streaming output into a :class:`~ctxmodes.tools.output.TailBuffer`,
and gives up on a deadline, an abort, or the child's death — whichever comes first.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal as signals
import subprocess
import time
from collections.abc import Callable
from typing import Literal

from ctxmodes.abort import AbortSignal
from ctxmodes.tools.output import TailBuffer

PumpResult = Literal["done", "timeout", "aborted", "exited"]

#: How often a wait wakes to notice that the child died without closing its pipes (a
#: background grandchild may hold them open).
_LIVENESS_INTERVAL = 0.1
#: Minimum spacing of progress callbacks, like Pi's bash tool (100 ms).
PROGRESS_INTERVAL = 0.1
_CHUNK = 65536
#: Bound on reads after completion: a background process that keeps writing must not keep
#: a finished request from returning.
_MAX_DRAIN_READS = 64


class Waker:
    """A self-pipe: :meth:`wake` (any thread, e.g. an abort callback) ends a :func:`pump` wait."""

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)

    def fileno(self) -> int:
        return self._read_fd

    def wake(self) -> None:
        # A full pipe means a wake-up is already pending; a closed one means shutdown.
        with contextlib.suppress(OSError):
            os.write(self._write_fd, b"!")

    def drain(self) -> None:
        # The read end is non-blocking: BlockingIOError (an OSError) means it is empty.
        with contextlib.suppress(OSError):
            while os.read(self._read_fd, 512):
                pass

    def close(self) -> None:
        close_fds(self._read_fd, self._write_fd)


def pump(
    process: subprocess.Popen[bytes],
    output_fd: int,
    control_fd: int,
    output: TailBuffer,
    control: bytearray,
    is_complete: Callable[[bytearray], bool],
    *,
    deadline: float | None,
    signal: AbortSignal,
    waker: Waker,
    on_progress: Callable[[], None] | None = None,
) -> PumpResult:
    """Stream ``output_fd`` into ``output`` and ``control_fd`` into ``control`` until done.

    :param is_complete: True once ``control`` holds the awaited message.
    :param deadline: a :func:`time.monotonic` instant, or ``None`` for no time limit.
    :param signal: checked on every wake-up; register ``waker.wake`` on it for promptness.
    :param on_progress: called after new output, at most every :data:`PROGRESS_INTERVAL`.
    :return: ``done`` (message complete; output read up to it), ``timeout``, ``aborted`` or
        ``exited`` (the child died first).
    """
    readable = [output_fd, control_fd]
    last_progress = 0.0
    pending_progress = False
    while True:
        if is_complete(control):
            _drain(output_fd, output.append)
            return "done"
        if signal.aborted:
            return "aborted"
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return "timeout"
        if process.poll() is not None:
            _drain(output_fd, output.append)
            _drain(control_fd, control.extend)
            return "done" if is_complete(control) else "exited"
        wait = _LIVENESS_INTERVAL if deadline is None else min(_LIVENESS_INTERVAL, deadline - now)
        ready, _, _ = select.select([*readable, waker.fileno()], [], [], max(wait, 0.0))
        for source in ready:
            if source == waker.fileno():
                waker.drain()
                continue
            data = _read(source)
            if not data:
                readable.remove(source)
            elif source == output_fd:
                output.append(data)
                pending_progress = True
            else:
                control += data
        if on_progress is not None and pending_progress:
            now = time.monotonic()
            if now - last_progress >= PROGRESS_INTERVAL:
                last_progress = now
                pending_progress = False
                on_progress()


def interrupt(process: subprocess.Popen[bytes]) -> None:
    """Send SIGINT to the child's whole process group (its foreground work)."""
    signal_group(process, signals.SIGINT)


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's process group and reap the child."""
    signal_group(process, signals.SIGKILL)
    # A child stuck in uninterruptible I/O cannot be reaped; nothing more can be done here.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def close_fds(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    """Send ``sig`` to the child's process group; a group that is gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(process.pid, sig)


def _read(fd: int) -> bytes:
    # The pipes are blocking and select() reported data, so a read never waits; an error
    # means the other end is gone, which callers treat like end of file.
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""


def _drain(fd: int, sink: Callable[[bytes], object]) -> None:
    """Read what ``fd`` already holds into ``sink``, without waiting for more."""
    for _ in range(_MAX_DRAIN_READS):
        ready, _, _ = select.select([fd], [], [], 0)
        if not ready:
            return
        data = _read(fd)
        if not data:
            return
        sink(data)
