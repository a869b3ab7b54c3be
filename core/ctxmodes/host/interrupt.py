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

The command line takes ``SIGTERM`` and ``SIGHUP`` (``kill``, a closed terminal, a system
shutting down) the same way, as Pi's print and RPC modes do: the run is wound down, the
session closed, its shell and the commands it started stopped, and then :class:`Terminated`
ends the command with the signal's status, where the default action left a tool's process
running and the reply unrecorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ctxmodes.errors import Terminated

if TYPE_CHECKING:
    from types import FrameType

#: The signals that ask a command to end, besides Ctrl-C: ``kill``, and a terminal closed.
_TERMINATION_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGHUP")


@contextmanager
def interrupt_aborts(abort: Callable[[], None], *, termination: bool = False) -> Iterator[None]:
    """Run the block with Ctrl-C turned into ``abort`` (see the module docstring), and with
    ``termination`` the termination signals too, :class:`Terminated` raised after it."""
    import signal  # here, not at start-up: a command that runs no prompt never needs it

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handled: list[int] = (
        [signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else []
    )
    if termination:
        handled += termination_signals_left_default()
    aborting: list[threading.Thread] = []
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if aborting:
            raise _stop(signum)
        received.append(signum)
        thread = threading.Thread(target=abort, name="ctxmodes-interrupt", daemon=True)
        aborting.append(thread)
        thread.start()

    previous = {signum: signal.signal(signum, on_signal) for signum in handled}
    failure: Exception | None = None
    try:
        yield
    except Exception as exc:  # what the abort made of the work, a cancelled summary say
        failure = exc
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for thread in aborting:
            thread.join()
    if received:
        raise _stop(received[0]) from failure
    if failure is not None:
        raise failure


@contextmanager
def terminations_raise() -> Iterator[None]:
    """Run the block with the termination signals raising :class:`Terminated` in the main
    thread where it stands: for a main thread that waits (RPC mode reads its commands there)
    and winds its work down as it unwinds."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signum)

    handled = termination_signals_left_default()
    previous = {signum: signal.signal(signum, on_signal) for signum in handled}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def termination_signals_left_default() -> list[int]:
    """``SIGTERM`` and ``SIGHUP``, those of them this platform has whose handling is still
    the default: a program's own handler, or ``nohup``'s ignoring, is left alone."""
    import signal

    found = (getattr(signal, name, None) for name in _TERMINATION_SIGNALS)
    return [
        signum
        for signum in found
        if signum is not None and signal.getsignal(signum) == signal.SIG_DFL
    ]


def _stop(signum: int) -> BaseException:
    import signal

    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)
