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
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Final, TypeVar

__all__ = ["can_fork", "map_in_turns", "processes_allowed", "run_forked_beside"]

T = TypeVar("T")

_READ_SIZE: Final = 1 << 20
_LENGTH_BYTES: Final = 8
_PIPE_SIZE: Final = 1 << 20
_PROCESSES_MOST: Final = 8


def can_fork() -> bool:
    """Whether work may be forked off now: the platform forks and no other thread runs."""
    return hasattr(os, "fork") and threading.active_count() == 1


def processes_allowed() -> int:
    """How many processes one piece of work may be shared by now: one per usable core, at
    most ``$CTXMODES_READ_PROCESSES`` (a program that must not fork sets it to 1, and so does
    any value that is not a whole number) and at most eight; one when :func:`can_fork` says
    no."""
    if not can_fork():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    value = os.environ.get("CTXMODES_READ_PROCESSES")
    try:
        allowed = _PROCESSES_MOST if value is None else int(value)
    except ValueError:
        allowed = 1
    return max(1, min(cores or 1, allowed, _PROCESSES_MOST))


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
            child = _fork(partial(_write_one, part))
            if child is None:
                break
            children.append(child)
        mine = own()
        answers: list[bytearray | None] = []
        while children:
            answers.append(_answer(*children.pop(0)))
    finally:
        for pid, read_end in children:
            _stop(pid, read_end)
    if len(answers) < len(parts) or None in answers:
        return None, mine
    return [answer for answer in answers if answer is not None], mine


def map_in_turns(work: Callable[[int], bytes], count: int) -> Iterator[bytes | bytearray]:
    """``work(0)``, ``work(1)``, … ``work(count - 1)``, in order, the even ones done by a
    forked child while this process does the odd ones.

    The child hands each result back as soon as it is done and waits for it to be read before
    going on past what the pipe holds, so however many results there are only a few are held
    at once: a long output is made on two cores and written out as it is made. Where there is
    no child (one may not or could not be forked) or it stops answering (``work`` raised in
    it, it was killed), this process does the rest of the work itself, so the results are the
    same either way, and a failure of ``work`` is raised here as it would be without a child.
    Closing the iterator early stops the child. Without a second process allowed
    (:func:`processes_allowed`) everything is done here.
    """
    child = None
    if count > 1 and processes_allowed() > 1:
        child = _fork(partial(_write_each, work, range(0, count, 2)))
    try:
        for theirs in range(0, count, 2):
            # This process's result first: the child works on its own meanwhile.
            own = work(theirs + 1) if theirs + 1 < count else None
            answer: bytes | bytearray | None = None
            if child is not None:
                answer = _read_answer(child[1])
            if answer is None:
                if child is not None:
                    _stop(*child)
                    child = None
                answer = work(theirs)
            yield answer
            if own is not None:
                yield own
        if child is not None:
            # Every answer read: the child is leaving on its own.
            pid, read_end = child
            child = None
            os.close(read_end)
            _reap(pid)
    finally:
        if child is not None:
            _stop(*child)


def _fork(write_answers: Callable[[int], None]) -> tuple[int, int] | None:
    """A child that writes its answers to a pipe: its pid and the pipe's read end."""
    read_end, write_end = os.pipe()
    _widen(write_end)
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        _run_child(write_answers, read_end, write_end)
    os.close(write_end)
    return pid, read_end


def _widen(pipe: int) -> None:
    """Let the pipe hold an answer of a megabyte or so, which the child then writes without
    waiting to be read piece by piece (Linux; elsewhere, or above the system's limit, the
    pipe stays as it is)."""
    import fcntl  # POSIX, as forking is

    if hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)


def _run_child(write_answers: Callable[[int], None], read_end: int, write_end: int) -> None:
    """In the child: write the answers and leave, whatever happens."""
    status = 1
    try:
        os.close(read_end)
        write_answers(write_end)
        status = 0
    except BaseException:  # the parent gets no whole answer, and does the work itself
        status = 1
    finally:
        os._exit(status)


def _write_one(part: Callable[[], bytes], write_end: int) -> None:
    _write_answer(write_end, part())


def _write_each(work: Callable[[int], bytes], indexes: range, write_end: int) -> None:
    for index in indexes:
        _write_answer(write_end, work(index))


def _write_answer(write_end: int, answer: bytes) -> None:
    """An answer as :func:`_read_answer` reads it: its length, then its bytes."""
    _write_all(write_end, len(answer).to_bytes(_LENGTH_BYTES, "little"))
    _write_all(write_end, answer)


def _write_all(write_end: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(write_end, view) :]


def _stop(pid: int, read_end: int) -> None:
    os.close(read_end)
    _kill(pid)


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
    import signal  # only a child that failed is killed: not worth importing at every start

    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
