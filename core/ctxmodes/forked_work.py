"""Work shared with forked copies of this process, each answering in bytes over a pipe.

For CPU-bound work in pure Python, the one way to use a second core without paying for a new
interpreter's start-up: a forked child starts with everything already imported and in
memory. Only a process with a single thread may fork this way (a thread holding a lock at
the fork would leave the child's copy of it locked forever), and the children call nothing
but the work given to them before leaving with :func:`os._exit`, so they never run the
parent's clean-up, flush its buffers or touch what it has open.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

__all__ = ["can_fork", "run_forked_beside"]

T = TypeVar("T")

_READ_SIZE: Final = 1 << 20
_LENGTH_BYTES: Final = 8


def can_fork() -> bool:
    """Whether work may be forked off now: the platform forks and no other thread runs."""
    return hasattr(os, "fork") and threading.active_count() == 1


def run_forked_beside(
    parts: Sequence[Callable[[], bytes]], own: Callable[[], T]
) -> tuple[list[bytearray] | None, T]:
    """Run each of ``parts`` in a child process of its own while ``own`` runs here.

    Returns the bytes each part returned, in order, and what ``own`` returned; ``None``
    instead of the list when any part could not be had (the fork failed, the part raised, the
    child was killed): the caller then does that work itself. ``own``'s exceptions propagate,
    and any child still running is then killed.
    """
    children: list[tuple[int, int]] = []
    try:
        for part in parts:
            child = _fork(part)
            if child is None:
                break
            children.append(child)
        mine = own()
        answers: list[bytearray | None] = []
        while children:
            answers.append(_answer(*children.pop(0)))
    finally:
        for pid, read_end in children:
            os.close(read_end)
            _kill(pid)
    if len(answers) < len(parts) or None in answers:
        return None, mine
    return [answer for answer in answers if answer is not None], mine


def _fork(part: Callable[[], bytes]) -> tuple[int, int] | None:
    """A child running ``part``: its pid and the read end of its answer's pipe."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        _run_child(part, read_end, write_end)
    os.close(write_end)
    return pid, read_end


def _run_child(part: Callable[[], bytes], read_end: int, write_end: int) -> None:
    """In the child: write what ``part`` returns and leave, whatever happens."""
    status = 1
    try:
        os.close(read_end)
        answer = part()
        _write_all(write_end, len(answer).to_bytes(_LENGTH_BYTES, "little"))
        _write_all(write_end, answer)
        status = 0
    except BaseException:  # the parent gets no whole answer, and does the work itself
        status = 1
    finally:
        os._exit(status)


def _write_all(write_end: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(write_end, view) :]


def _answer(pid: int, read_end: int) -> bytearray | None:
    """Everything the child wrote, once it has left; ``None`` if it did not write it all.

    The answer's length, written first, tells a whole answer from one cut short, so the
    child's exit status is not needed: a program that reaps every child itself (a handler of
    ``SIGCHLD``) may have taken it already."""
    try:
        answer = _read_answer(read_end)
    except BaseException:
        _kill(pid)
        raise
    finally:
        os.close(read_end)
    _reap(pid)
    return answer


def _read_answer(read_end: int) -> bytearray | None:
    """The answer after its length, read in place: a list of pieces joined at the end would
    hold it twice at once. ``None`` when it ends short."""
    length = _read_exactly(read_end, bytearray(_LENGTH_BYTES))
    if length is None:
        return None
    return _read_exactly(read_end, bytearray(int.from_bytes(length, "little")))


def _read_exactly(read_end: int, buffer: bytearray) -> bytearray | None:
    view = memoryview(buffer)
    while view:
        count = os.readv(read_end, [view[:_READ_SIZE]])
        if not count:
            return None
        view = view[count:]
    return buffer


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
