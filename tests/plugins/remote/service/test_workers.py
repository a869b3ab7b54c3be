"""The service's worker threads: accounts take turns, so one account's queue of slow calls
does not hold another's call behind all of it; and each session's calls take turns, wherever
they run."""

import asyncio
import threading
import time
from concurrent.futures import Future

import pytest

from ctxmodes_remote.service.workers import FairWorker, SessionTurns, wait_serving, yield_turn


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


def _long_call(worker_done: threading.Event, ran: list[str], name: str):
    """A call that keeps yielding its turn until ``worker_done`` is set (or 10 s pass)."""

    def call() -> None:
        deadline = time.monotonic() + 10
        while not worker_done.is_set() and time.monotonic() < deadline:
            yield_turn()
        ran.append(name)

    return call


def test_a_long_call_lets_other_accounts_calls_run_between_its_slices():
    worker = FairWorker("test-worker")
    done = threading.Event()
    ran: list[str] = []
    heavy = worker.submit("heavy", _long_call(done, ran, "heavy0"))
    # Another call of the same account waits for the first to end; the quiet account's
    # calls run while the first is still going.
    second = worker.submit("heavy", lambda: ran.append("heavy1"))
    quiet = [worker.submit("quiet", lambda n=n: ran.append(f"quiet{n}")) for n in range(3)]
    for future in quiet:
        future.result(timeout=10)
    assert ran == ["quiet0", "quiet1", "quiet2"]
    assert not heavy.done()
    done.set()
    heavy.result(timeout=10)
    second.result(timeout=10)
    worker.close()
    assert ran == ["quiet0", "quiet1", "quiet2", "heavy0", "heavy1"]


def test_a_call_that_must_not_nest_waits_for_the_paused_call():
    worker = FairWorker("test-worker")
    done = threading.Event()
    ran: list[str] = []
    heavy = worker.submit("heavy", _long_call(done, ran, "heavy"))
    exclusive = worker.submit("", lambda: ran.append("exclusive"), nests=False)
    quiet = worker.submit("quiet", lambda: ran.append("quiet"))
    quiet.result(timeout=10)
    assert not exclusive.done()
    done.set()
    exclusive.result(timeout=10)
    heavy.result(timeout=10)
    worker.close()
    assert ran == ["quiet", "heavy", "exclusive"]


def test_a_call_waiting_for_work_elsewhere_lets_other_accounts_calls_run():
    worker = FairWorker("test-worker")
    elsewhere: Future[str] = Future()
    ran: list[str] = []

    def waiting() -> str:
        answer = wait_serving(elsewhere)
        ran.append("waited")
        return answer

    waiter = worker.submit("heavy", waiting)
    same = worker.submit("heavy", lambda: ran.append("heavy again"))
    quiet = worker.submit("quiet", lambda: ran.append("quiet"))
    quiet.result(timeout=10)
    assert ran == ["quiet"]
    elsewhere.set_result("done")
    assert waiter.result(timeout=10) == "done"
    same.result(timeout=10)
    worker.close()
    assert ran == ["quiet", "waited", "heavy again"]


def test_calls_about_one_session_take_turns_in_arrival_order_and_others_pass():
    async def scenario():
        turns = SessionTurns()
        order = []
        release = asyncio.Event()

        async def session_call(session, name, *, hold=False):
            async with turns.turn(session):
                order.append(f"{name} starts")
                if hold:
                    await release.wait()
                await asyncio.sleep(0)
                order.append(f"{name} ends")

        first = asyncio.create_task(session_call("s1", "a", hold=True))
        await asyncio.sleep(0)
        later = [asyncio.create_task(session_call("s1", name)) for name in "bcd"]
        await asyncio.sleep(0)
        later[1].cancel()  # a caller that hangs up while waiting gives up its place
        await session_call("s2", "x")  # another session is not held up
        assert order == ["a starts", "x starts", "x ends"]
        assert len(turns) == 1
        release.set()
        await asyncio.gather(first, later[0], later[2])
        assert order[3:] == ["a ends", "b starts", "b ends", "d starts", "d ends"]
        assert len(turns) == 0

    asyncio.run(scenario())


def test_calls_submitted_from_the_loop_are_answered_on_it():
    worker = FairWorker("test-worker")

    def fail() -> None:
        raise ValueError("refused")

    async def main() -> tuple[int, str]:
        loop_thread = threading.current_thread()
        ran_on = await worker.submit_from_loop("a", threading.current_thread)
        assert ran_on is not loop_thread
        with pytest.raises(ValueError, match="refused"):
            await worker.submit_from_loop("a", fail)
        return await worker.submit_from_loop("b", lambda: 42), "done"

    assert asyncio.run(main()) == (42, "done")
    worker.close()


def test_a_call_from_the_loop_cancelled_before_it_starts_never_runs():
    worker = FairWorker("test-worker")
    gate = threading.Event()
    ran: list[str] = []

    async def main() -> None:
        held = worker.submit("", gate.wait)
        waiting = worker.submit_from_loop("a", lambda: ran.append("cancelled one"))
        waiting.cancel()
        after = worker.submit_from_loop("a", lambda: ran.append("next"))
        gate.set()
        await after
        assert held.result(timeout=10)

    asyncio.run(main())
    worker.close()
    assert ran == ["next"]


def test_held_answers_reach_the_loop_only_after_their_commit():
    class Held:
        def __init__(self) -> None:
            self.pending = False
            self.committed: list[bool] = []

        def writes_pending(self) -> bool:
            return self.pending

        def commit_writes(self) -> None:
            self.committed.append(self.pending)
            self.pending = False

    held = Held()
    worker = FairWorker("test-worker", held)

    def write() -> str:
        held.pending = True
        return "written"

    async def main() -> str:
        answer = await worker.submit_from_loop("a", write)
        # Committed by the time the answer is seen, not after.
        assert held.committed == [True]
        # Calls of one group are all answered once it is committed, with their own
        # outcomes, the failure of one among them.
        gate = threading.Event()
        worker.submit("", gate.wait)
        calls = [worker.submit_from_loop(f"a{n}", write) for n in range(4)]
        calls.append(worker.submit_from_loop("b", lambda: (write(), 1 / 0)))
        gate.set()
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        assert outcomes[:4] == ["written"] * 4
        assert isinstance(outcomes[4], ZeroDivisionError)
        assert held.committed == [True, True]
        return answer

    assert asyncio.run(main()) == "written"
    worker.close()
