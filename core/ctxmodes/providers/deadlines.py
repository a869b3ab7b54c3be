"""Request deadlines, all watched by one thread.

A model call with a deadline (Mistral's whole-request timeout, the seam's ``deadline_s``)
used to start a ``threading.Timer`` — a new thread per request, a fair part of a short
streamed answer's CPU. One daemon thread keeps every deadline in a heap instead; setting
one costs a heap push, and it wakes only when the earliest deadline changes.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable

__all__ = ["Deadline", "after"]


class Deadline:
    """A pending call; :meth:`cancel` stops it if it has not run."""

    __slots__ = ("_action", "at")

    def __init__(self, at: float, action: Callable[[], None]) -> None:
        self.at = at
        self._action: Callable[[], None] | None = action

    def cancel(self) -> None:
        self._action = None

    def _fire(self) -> None:
        action, self._action = self._action, None
        if action is not None:
            action()


class _Watcher:
    def __init__(self) -> None:
        self._ready = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, seconds: float, action: Callable[[], None]) -> Deadline:
        deadline = Deadline(time.monotonic() + max(0.0, seconds), action)
        with self._ready:
            earliest = not self._heap or deadline.at < self._heap[0][0]
            heapq.heappush(self._heap, (deadline.at, next(self._order), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="ctxmodes-deadlines", daemon=True
                )
                self._thread.start()
            elif earliest:
                self._ready.notify()
        return deadline

    def _run(self) -> None:
        while True:
            with self._ready:
                while True:
                    now = time.monotonic()
                    # Cancelled deadlines are dropped as they reach the top.
                    while self._heap and self._heap[0][2]._action is None:
                        heapq.heappop(self._heap)
                    if self._heap and self._heap[0][0] <= now:
                        due = heapq.heappop(self._heap)[2]
                        break
                    self._ready.wait(self._heap[0][0] - now if self._heap else None)
            due._fire()

    def reset_after_fork(self) -> None:
        self._ready = threading.Condition(threading.Lock())
        self._heap = []
        self._thread = None


_watcher = _Watcher()
os.register_at_fork(after_in_child=_watcher.reset_after_fork)


def after(seconds: float, action: Callable[[], None]) -> Deadline:
    """Call ``action`` on the watcher thread once ``seconds`` have passed, unless cancelled
    first. ``action`` must be quick and must not raise."""
    return _watcher.schedule(seconds, action)
