"""Timing an abort: a request blocked in its read must end at once when aborted."""

from __future__ import annotations

import threading
import time

from ctxmodes.abort import AbortController

#: How soon an aborted request must have ended. The servers these tests use never answer, so
#: without the abort the read would block until the test gives up; the margin above a prompt
#: end (milliseconds) is for a loaded machine's thread scheduling.
PROMPT_S = 0.5


def abort_and_wait(controller: AbortController, worker: threading.Thread) -> None:
    """Abort ``controller`` once ``worker`` had time to block in its read, and check the
    worker ended within :data:`PROMPT_S`."""
    time.sleep(0.05)  # let the client block in its read (not synchronisation of results)
    started = time.monotonic()
    controller.abort()
    worker.join(2)
    elapsed = time.monotonic() - started
    assert not worker.is_alive()
    assert elapsed < PROMPT_S, elapsed
