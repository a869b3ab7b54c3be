"""The service's worker threads: each runs the engine calls given to it one at a time,
sharing its time fairly between the accounts with calls waiting.

A plain executor runs calls in arrival order, so an account that sends many slow calls
(heavy searches, say) puts every other account's calls behind all of them. Here the next call
is always one of the account that has had the least of the thread's time while it waited
(start-time fair queuing): an account's cheap calls wait behind at most one slow call of
another, and an account that was idle gains no credit to spend later.

With group commit (:class:`HeldWrites`, SQLite), calls that ran while writes were held are
answered only once those writes are committed: the worker runs the calls waiting, then
commits them all with one sync, as soon as no call is waiting (or the group is
:data:`GROUP_CALLS` calls or :data:`GROUP_SECONDS` old), and then answers them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

_T = TypeVar("_T")
_Job = tuple[Callable[[], Any], "Future[Any]"]
#: Calls run while writes are held, with their outcome: ``(future, result, error)``.
_Held = tuple["Future[Any]", Any, BaseException | None]

#: The most calls one group commit answers, and the longest it stays open (seconds): a
#: steady stream of calls is committed in steps, not held indefinitely.
GROUP_CALLS = 64
GROUP_SECONDS = 0.005


class HeldWrites(Protocol):
    """Storage whose writes are held until committed in a group."""

    def writes_pending(self) -> bool:
        """Whether the calls run since the last commit must wait for the next."""
        ...

    def commit_writes(self) -> None:
        """:raises Exception: nothing held is on disk."""
        ...


class FairWorker:
    """One thread running submitted calls one at a time, the least served account first."""

    def __init__(self, name: str, held: HeldWrites | None = None) -> None:
        self._held_writes = held
        #: Calls answered once the writes pending are committed, and when the first ran.
        self._held: list[_Held] = []
        self._group_opened = 0.0
        self._waiting: dict[str, deque[_Job]] = {}
        #: Seconds of the thread each account with calls waiting has had, on one clock that
        #: starts where the last call picked started (so a newcomer joins at par).
        self._served: dict[str, float] = {}
        self._floor = 0.0
        self._changed = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, account: str, call: Callable[[], _T]) -> Future[_T]:
        """Run ``call`` in ``account``'s turn; its future holds the result or the error.

        :raises RuntimeError: the worker is closing.
        """
        future: Future[_T] = Future()
        with self._changed:
            if self._closing:
                raise RuntimeError("the worker is closing")
            if account not in self._waiting:
                self._waiting[account] = deque()
                self._served[account] = max(self._served.get(account, 0.0), self._floor)
            self._waiting[account].append((call, future))
            self._changed.notify()
        return future

    def close(self) -> None:
        """Run the calls already submitted, then stop the thread."""
        with self._changed:
            self._closing = True
            self._changed.notify()
        self._thread.join()

    def _next(self, *, wait: bool = True) -> tuple[str, _Job] | None:
        """The next call; ``None`` when closing with none left, or none waits and ``wait``
        is false."""
        with self._changed:
            while not self._waiting:
                if self._closing or not wait:
                    return None
                self._changed.wait()
            account = min(self._waiting, key=self._served.__getitem__)
            queue = self._waiting[account]
            job = queue.popleft()
            self._floor = self._served[account]
            if not queue:
                del self._waiting[account]
                del self._served[account]
            return account, job

    def _charge(self, account: str, seconds: float) -> None:
        with self._changed:
            if account in self._served:
                self._served[account] += seconds
            else:
                # It has nothing waiting: what it used counts when it comes back.
                self._served[account] = self._floor + seconds
            # Accounts gone quiet whose use the clock has caught up with count no more.
            for idle in [a for a, t in self._served.items() if a not in self._waiting]:
                if self._served[idle] <= self._floor:
                    del self._served[idle]

    def _run(self) -> None:
        while True:
            picked = self._next(wait=not self._held)
            if picked is None:
                if not self._held:
                    return
                self._commit()
                continue
            self._execute(*picked)

    def _execute(self, account: str, job: _Job) -> None:
        call, future = job
        if not future.set_running_or_notify_cancel():
            return
        started = time.perf_counter()
        result: Any = None
        error: BaseException | None = None
        try:
            result = call()
        except BaseException as failure:  # handed to whoever awaits the future
            error = failure
        self._charge(account, time.perf_counter() - started)
        self._answer(future, result, error)

    def _answer(self, future: Future[Any], result: Any, error: BaseException | None) -> None:
        """Answer a call at once, or hold its answer for the commit of the writes pending."""
        if self._held_writes is None or not self._held_writes.writes_pending():
            _settle(future, result, error)
            return
        if not self._held:
            self._group_opened = time.perf_counter()
        self._held.append((future, result, error))
        if (
            len(self._held) >= GROUP_CALLS
            or time.perf_counter() - self._group_opened >= GROUP_SECONDS
        ):
            self._commit()

    def _commit(self) -> None:
        """Commit the held writes, then answer the calls that waited for them (each with
        the storage's failure, when the commit failed)."""
        assert self._held_writes is not None
        held, self._held = self._held, []
        try:
            self._held_writes.commit_writes()
        except BaseException as failure:
            for future, _, _ in held:
                future.set_exception(failure)
        else:
            for future, result, error in held:
                _settle(future, result, error)


def _settle(future: Future[Any], result: Any, error: BaseException | None) -> None:
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
