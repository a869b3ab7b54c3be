"""The thread that drives a session on behalf of a UI, so the UI thread never blocks on a
run (see :meth:`ctxmodes.host.lifecycle.Lifecycle.set_handoff`)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from ctxmodes import library_log

_log = library_log.logger(__name__)

Job = Callable[[], None]


class SessionWorker:
    """Runs handed-off jobs one after another, in order, on one daemon thread."""

    def __init__(self, name: str = "ctxmodes-session") -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def __call__(self, job: Job) -> None:
        self._jobs.put(job)

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def stop(self, timeout: float | None = None) -> None:
        """Finish the jobs already given, then end the thread."""
        self._jobs.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                # The session reports expected failures itself; anything else must not end
                # the thread, or later input would never run.
                _log.exception("session job failed")
