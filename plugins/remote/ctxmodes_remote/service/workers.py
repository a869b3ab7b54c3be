"""The service's worker threads: each runs the engine calls given to it one at a time,
sharing its time fairly between the accounts with calls waiting.

A plain executor runs calls in arrival order, so an account that sends many slow calls
(heavy searches, say) puts every other account's calls behind all of them. Here the next call
is always one of the account that has had the least of the thread's time while it waited
(start-time fair queuing): an account's cheap calls wait behind at most one slow call of
another, and an account that was idle gains no credit to spend later.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

_T = TypeVar("_T")
_Job = tuple[Callable[[], Any], "Future[Any]"]


class FairWorker:
    """One thread running submitted calls one at a time, the least served account first."""

    def __init__(self, name: str) -> None:
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

    def _next(self) -> tuple[str, _Job] | None:
        with self._changed:
            while not self._waiting:
                if self._closing:
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
        while (picked := self._next()) is not None:
            account, (call, future) = picked
            if not future.set_running_or_notify_cancel():
                continue
            started = time.perf_counter()
            try:
                result = call()
            except BaseException as error:  # handed to whoever awaits the future
                future.set_exception(error)
            else:
                future.set_result(result)
            self._charge(account, time.perf_counter() - started)
