"""Model calls run on threads that are kept for the next call: never a bound that makes a call
wait for another's answer, and a thread idle for long enough ends."""

from __future__ import annotations

import threading

from ctxmodes.providers import call_threads
from ctxmodes.providers.call_threads import run_on_call_thread


def _ran_on(name: str) -> threading.Thread:
    done = threading.Event()
    ran: list[threading.Thread] = []

    def call() -> None:
        ran.append(threading.current_thread())
        done.set()

    run_on_call_thread(call, name)
    assert done.wait(5)
    return ran[0]


def _idle_again() -> None:
    """Wait until the thread of the call that just ended waits for the next."""
    for _ in range(500):
        if call_threads._threads._idle:
            return
        threading.Event().wait(0.01)


def test_a_call_runs_on_another_thread_which_the_next_call_reuses_under_its_own_name():
    first = _ran_on("model-a")
    assert first is not threading.current_thread()
    assert first.daemon
    _idle_again()
    second = _ran_on("model-b")
    assert second is first
    assert second.name == "model-b"


def test_calls_that_block_all_run_at_once():
    together = threading.Barrier(21, timeout=10)
    finished = threading.Semaphore(0)

    def call() -> None:
        together.wait()
        finished.release()

    for n in range(20):
        run_on_call_thread(call, f"model-{n}")
    together.wait()  # raises BrokenBarrierError unless all 20 run at the same time
    for _ in range(20):
        assert finished.acquire(timeout=5)


def test_a_thread_idle_for_long_enough_ends_and_a_later_call_still_runs(monkeypatch):
    monkeypatch.setattr(call_threads, "IDLE_S", 0.05)
    # Threads idle from earlier tests wait with the old timeout: start from fresh ones.
    monkeypatch.setattr(call_threads, "_threads", call_threads._CallThreads())
    thread = _ran_on("model-short")
    thread.join(5)
    assert not thread.is_alive()
    assert call_threads._threads._idle == []
    assert _ran_on("model-later") is not thread


def test_calls_handed_over_as_threads_time_out_are_never_lost(monkeypatch):
    calls = 200
    monkeypatch.setattr(call_threads, "IDLE_S", 0.001)
    monkeypatch.setattr(call_threads, "_threads", call_threads._CallThreads())
    ran = threading.Semaphore(0)
    for n in range(calls):
        run_on_call_thread(ran.release, f"model-{n}")
        if n % 7 == 0:
            threading.Event().wait(0.002)
    for _ in range(calls):
        assert ran.acquire(timeout=5)
