"""The service's worker threads: accounts take turns, so one account's queue of slow calls
does not hold another's call behind all of it."""

import threading

import pytest

from ctxmodes_remote.service.workers import FairWorker


def test_cheap_calls_of_one_account_wait_behind_one_slow_call_of_another():
    worker = FairWorker("test-worker")
    gate = threading.Event()
    ran: list[str] = []

    def slow(n: int) -> None:
        threading.Event().wait(0.05)
        ran.append(f"heavy{n}")

    # Hold the thread so that everything below is queued before any of it runs.
    held = worker.submit("", gate.wait)
    futures = [worker.submit("heavy", lambda n=n: slow(n)) for n in range(4)]
    futures += [worker.submit("quiet", lambda n=n: ran.append(f"quiet{n}")) for n in range(3)]
    gate.set()
    for future in [held, *futures]:
        future.result(timeout=10)
    worker.close()
    # Each account keeps its own order; the quiet one's calls all run after the first slow
    # call, not after all four.
    assert ran == ["heavy0", "quiet0", "quiet1", "quiet2", "heavy1", "heavy2", "heavy3"]


def test_errors_reach_the_caller_and_the_worker_goes_on():
    worker = FairWorker("test-worker")

    def fail() -> None:
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        worker.submit("a", fail).result(timeout=10)
    assert worker.submit("a", lambda: 42).result(timeout=10) == 42
    worker.close()


def test_close_runs_what_was_submitted_then_refuses_more():
    worker = FairWorker("test-worker")
    gate = threading.Event()
    worker.submit("a", gate.wait)
    queued = worker.submit("b", lambda: "done")
    gate.set()
    worker.close()
    assert queued.result(timeout=0) == "done"
    with pytest.raises(RuntimeError, match="closing"):
        worker.submit("a", lambda: None)
