"""Threads for model calls, kept for the next call instead of started anew.

A streamed model call runs on a thread of its own (see
:class:`~ctxmodes.providers.http_model.HttpModelProvider`). Starting a thread costs a
fraction of a millisecond before the request leaves, and a new thread's first request runs
slower than a warm one's; a service in front of a model makes many such calls, so a thread
that finished one waits a while for the next. The threads are daemons, as the calls' own
threads were: a process never waits at exit for a call still streaming. There is no upper
bound on their number, since a call blocks its thread for as long as the model streams and a
bound would make the next call wait for someone else's answer.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from queue import Empty, SimpleQueue

__all__ = ["IDLE_S", "run_on_call_thread"]

#: How long a thread with nothing to do waits for another call before it ends.
IDLE_S = 60.0


_Inbox = SimpleQueue[tuple[Callable[[], None], str]]


class _CallThreads:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: Each idle thread's inbox; the most recently idle last (it is the warmest).
        self._idle: list[_Inbox] = []

    def run(self, function: Callable[[], None], name: str) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name=name, daemon=True).start()
        inbox.put((function, name))

    def _serve(self, inbox: _Inbox) -> None:
        while True:
            try:
                function, name = inbox.get(timeout=IDLE_S)
            except Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                # A caller took this thread just now and is handing it a call.
                continue
            threading.current_thread().name = name
            try:
                function()
            finally:
                # ``function`` handles its own errors; the thread is free again either way.
                with self._lock:
                    self._idle.append(inbox)

    def reset_after_fork(self) -> None:
        self._lock = threading.Lock()
        self._idle = []


_threads = _CallThreads()
os.register_at_fork(after_in_child=_threads.reset_after_fork)


def run_on_call_thread(function: Callable[[], None], name: str) -> None:
    """Run ``function`` on an idle call thread, or on a new one (named ``name``) when none is
    idle. ``function`` must not raise."""
    _threads.run(function, name)
