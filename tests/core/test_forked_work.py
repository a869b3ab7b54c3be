"""Work shared with forked copies of the process: answers in order, failures handed back to
the caller, and no child left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable

import pytest

from ctxmodes import forked_work
from ctxmodes.forked_work import can_fork, map_in_turns, run_forked_beside


def _answer(text: bytes) -> Callable[[], bytes]:
    return lambda: text + str(os.getpid()).encode()


def test_each_part_runs_in_a_child_of_its_own_and_answers_in_order(forked: list[int]) -> None:
    answers, mine = run_forked_beside([_answer(b"a"), _answer(b"b")], lambda: os.getpid())
    assert mine == os.getpid()
    assert answers == [b"a%d" % forked[0], b"b%d" % forked[1]]


def test_large_answers_arrive_whole(forked: list[int]) -> None:
    big = os.urandom(3 << 20)
    answers, _ = run_forked_beside([lambda: big], lambda: None)
    assert answers == [big]


def _raise() -> bytes:
    raise ValueError("the part failed")


def _die() -> bytes:
    os.kill(os.getpid(), signal.SIGKILL)
    return b"never"


@pytest.mark.parametrize("failing", [_raise, _die])
def test_a_part_that_fails_leaves_the_work_to_the_caller(
    forked: list[int], failing: Callable[[], bytes]
) -> None:
    answers, mine = run_forked_beside([_answer(b"a"), failing], lambda: "here")
    assert answers is None
    assert mine == "here"


def test_answers_arrive_where_the_program_reaps_every_child_itself(forked: list[int]) -> None:
    def reap_all(signum: int, frame: object) -> None:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass

    previous = signal.signal(signal.SIGCHLD, reap_all)
    try:
        big = os.urandom(1 << 20)

        def slow_own() -> None:
            time.sleep(0.2)  # the children have left, and been reaped, by now

        answers, _ = run_forked_beside([_answer(b"a"), lambda: big], slow_own)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert answers == [b"a%d" % forked[0], big]


def test_when_the_parent_fails_its_children_are_stopped(forked: list[int]) -> None:
    release = os.pipe()

    def wait_forever() -> bytes:
        os.read(release[0], 1)
        return b""

    def fail() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_forked_beside([wait_forever], fail)
    os.close(release[0])
    os.close(release[1])


def test_a_fork_that_fails_leaves_the_work_to_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise BlockingIOError("no more processes")

    monkeypatch.setattr(forked_work.os, "fork", no_fork)
    assert run_forked_beside([_answer(b"a")], lambda: 1) == (None, 1)


def test_no_fork_while_another_thread_runs() -> None:
    started, stop = threading.Event(), threading.Event()

    def run() -> None:
        started.set()
        stop.wait()

    thread = threading.Thread(target=run)
    thread.start()
    started.wait()
    try:
        assert not can_fork()
    finally:
        stop.set()
        thread.join()


def _numbered(index: int) -> bytes:
    """Which process did turn ``index``, and a payload larger than a pipe holds."""
    return b"%d:%d:" % (index, os.getpid()) + bytes([index % 251]) * (300_000 + index)


@pytest.mark.parametrize("count", [0, 1, 2, 5, 8])
def test_turns_come_out_in_order_the_even_ones_from_a_child(forked: list[int], count: int) -> None:
    results = [bytes(result) for result in map_in_turns(_numbered, count)]
    assert len(forked) == (1 if count > 1 else 0)  # one is enough, and none for one turn
    assert len(results) == count
    for index, result in enumerate(results):
        turn, pid, _ = result.split(b":", 2)
        assert int(turn) == index
        assert result[len(b"%d:%s:" % (index, pid)) :] == bytes([index % 251]) * (300_000 + index)
        assert int(pid) == (forked[0] if forked and index % 2 == 0 else os.getpid())


@pytest.mark.parametrize("how", ["raise", "die"])
def test_turns_a_child_fails_at_are_done_here(forked: list[int], how: str) -> None:
    parent = os.getpid()

    def work(index: int) -> bytes:
        if os.getpid() != parent and index == 4:
            if how == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            raise ValueError("the child's turn failed")
        return b"%d:%d" % (index, os.getpid())

    results = [bytes(result) for result in map_in_turns(work, 9)]
    pids = [int(result.split(b":")[1]) for result in results]
    assert [int(result.split(b":")[0]) for result in results] == list(range(9))
    assert pids[:4] == [forked[0], parent, forked[0], parent]
    assert pids[4:] == [parent] * 5


def test_a_turn_that_fails_everywhere_raises_here(forked: list[int]) -> None:
    def work(index: int) -> bytes:
        if index == 2:
            raise ValueError(f"turn {index} failed")
        return b"fine"

    with pytest.raises(ValueError, match="turn 2 failed"):
        list(map_in_turns(work, 6))


def test_stopping_early_stops_the_child(forked: list[int]) -> None:
    turns = map_in_turns(_numbered, 50)
    assert next(turns).startswith(b"0:")
    turns.close()  # the fixture asserts the child is gone


def test_turns_without_a_fork_are_all_done_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise BlockingIOError("no more processes")

    monkeypatch.setattr(forked_work.os, "fork", no_fork)
    results = list(map_in_turns(lambda index: b"%d:%d" % (index, os.getpid()), 3))
    assert results == [b"%d:%d" % (index, os.getpid()) for index in range(3)]


def test_turns_are_all_done_here_where_one_process_is_allowed(
    forked: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXMODES_READ_PROCESSES", "1")
    assert [bytes(result) for result in map_in_turns(_numbered, 4)] == [
        _numbered(index) for index in range(4)
    ]
    assert forked == []
