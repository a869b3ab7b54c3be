"""Ctrl-C during a blocking call: stop the run the way ``abort`` does, then let the program
see its ``KeyboardInterrupt``.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be: inside a tool, a
model stream or the session's own bookkeeping. Raised there, it would leave a tool call
without its result and the run's end unrecorded. So while a blocking call runs on the main
thread under Python's default handler, the first Ctrl-C asks for an abort instead (from a
thread of its own: the handler interrupts code that may hold the session's locks), the run
winds down and records the aborted reply, and only then ``KeyboardInterrupt`` is raised. A
second Ctrl-C raises at once, for a run that does not stop. A program that installed its own
SIGINT handler keeps it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType


@contextmanager
def interrupt_aborts(abort: Callable[[], None]) -> Iterator[None]:
    """Run the block with Ctrl-C turned into ``abort`` (see the module docstring)."""
    import signal  # here, not at start-up: a command that runs no prompt never needs it

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    aborting: list[threading.Thread] = []

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        if aborting:
            raise KeyboardInterrupt
        thread = threading.Thread(target=abort, name="ctxmodes-interrupt", daemon=True)
        aborting.append(thread)
        thread.start()

    signal.signal(signal.SIGINT, on_interrupt)
    failure: Exception | None = None
    try:
        yield
    except Exception as exc:  # what the abort made of the work, a cancelled summary say
        failure = exc
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for thread in aborting:
            thread.join()
    if aborting:
        raise KeyboardInterrupt from failure
    if failure is not None:
        raise failure
