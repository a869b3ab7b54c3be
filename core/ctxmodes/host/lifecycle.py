"""Who drives a session, what it is doing, and the runs waiting to start.

The host is synchronous: whoever starts work (a prompt, a command, a navigation) does it on
its own thread and becomes the session's **driver** until the work and everything it set in
motion is over. Work requested while a driver exists — a hook asking for a new run from
``ctx_agent_settled``, a UI thread submitting text while the driver settles — is **deferred**:
the driver starts it, in request order, once its current work returned. Only the driver's
thread may start work directly; any other thread gets :class:`SessionBusyError` (or defers).

A UI that must never block (a terminal session) names a **hand-off**
(:meth:`Lifecycle.set_handoff`): work that would otherwise start on a thread that does not
drive the session is passed to it instead (typically a worker thread), and counts as
deferred until that thread has taken it.

Idleness follows Pi: a session is idle when no run is active and no compaction or branch
summary is in progress. A driver may be idle (inside ``ctx_agent_settled``, between queued
runs); :meth:`Lifecycle.wait_until_released` waits for the driver to finish everything.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from ctxmodes.host.errors import SessionBusyError

# The longest a wait for the session blocks at once (see wait_until_released).
_WAIT_SLICE = 0.1

Activity = Literal["compaction", "branch_summary"]
DeferredStart = Callable[[], None]
#: Runs a start on another thread, later (see :meth:`Lifecycle.set_handoff`).
Handoff = Callable[[DeferredStart], None]


class Lifecycle:
    """Driver ownership, activity flags and deferred starts of one session (thread-safe)."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.RLock())
        self._driver: int | None = None
        self._starts: deque[DeferredStart] = deque()
        self._run_active = False
        self._activity: Activity | None = None
        self._handoff: Handoff | None = None
        self._handed_off = 0

    # ------------------------------------------------------------------ state

    @property
    def run_active(self) -> bool:
        return self._run_active

    @property
    def activity(self) -> Activity | None:
        """The compaction or branch summary in progress, if any."""
        return self._activity

    def is_idle(self) -> bool:
        with self._changed:
            return not self._run_active and self._activity is None

    def is_driver(self) -> bool:
        """True on the thread that currently drives the session."""
        return self._driver == threading.get_ident()

    def has_driver(self) -> bool:
        return self._driver is not None

    def has_deferred(self) -> bool:
        """True while a deferred start waits for the driver (or for the hand-off thread)."""
        return bool(self._starts) or self._handed_off > 0

    def set_handoff(self, handoff: Handoff | None) -> None:
        """Pass work that would start on a non-driving thread to ``handoff`` instead.

        ``handoff(start)`` must return at once and call ``start()`` later on one thread, in
        the order received; ``start`` then drives the session on that thread (or defers to
        whoever drives by then). ``None`` restores running on the caller's thread.
        """
        with self._changed:
            self._handoff = handoff

    def hands_off(self) -> bool:
        """True when new work from a thread that does not drive is handed off."""
        return self._handoff is not None and self._driver is None

    # ------------------------------------------------------------------ driving

    @contextmanager
    def drive(self, what: str) -> Iterator[None]:
        """Own the session for the current thread while the block runs.

        Re-entrant on the driver's thread. Leaving the outermost block first runs every
        deferred start (each under the same ownership), then releases the session.

        :raises SessionBusyError: another thread drives the session.
        """
        if self.is_driver():
            yield
            return
        if not self.try_acquire():
            raise SessionBusyError(f"cannot {what}: the session is busy on another thread")
        try:
            yield
            self._run_deferred()
        finally:
            self._release()

    def try_acquire(self) -> bool:
        """Become the driver if nobody drives; False otherwise (also on the driver's own
        thread, which already drives). Pair a True result with :meth:`release`."""
        with self._changed:
            if self._driver is not None:
                return False
            self._driver = threading.get_ident()
            return True

    def release(self) -> None:
        """Run the deferred starts, then stop driving (after :meth:`try_acquire`)."""
        try:
            self._run_deferred()
        finally:
            self._release()

    def run_or_defer(self, start: DeferredStart) -> None:
        """Run ``start`` now on this thread if nobody drives the session (this thread then
        drives until everything it set in motion is done); otherwise leave it to the driver,
        which runs it after its current work."""
        with self._changed:
            if self._driver is not None:
                self._starts.append(start)
                return
            handoff = self._handoff
            if handoff is None:
                self._driver = threading.get_ident()
            else:
                self._handed_off += 1
        if handoff is not None:
            handoff(lambda: self._take_handed_off(start))
            return
        try:
            start()
            self._run_deferred()
        finally:
            self._release()

    def _take_handed_off(self, start: DeferredStart) -> None:
        with self._changed:
            self._handed_off -= 1
            if self._driver is not None:
                self._starts.append(start)
                return
            self._driver = threading.get_ident()
        try:
            start()
            self._run_deferred()
        finally:
            self._release()

    def _release(self) -> None:
        with self._changed:
            self._driver = None
            self._starts.clear()
            self._changed.notify_all()

    def _run_deferred(self) -> None:
        while True:
            with self._changed:
                if not self._starts:
                    return
                start = self._starts.popleft()
            start()

    # ------------------------------------------------------------------ activities

    def begin_run(self) -> None:
        """Mark a run active (the driver starts it).

        :raises SessionBusyError: a run, compaction or navigation is in progress.
        """
        with self._changed:
            if self._run_active or self._activity is not None:
                raise SessionBusyError("a run, compaction or navigation is already in progress")
            self._run_active = True

    def end_run(self) -> None:
        """Mark the run over (before ``ctx_agent_settled``, so handlers see an idle session)."""
        with self._changed:
            self._run_active = False
            self._changed.notify_all()

    @contextmanager
    def doing(self, activity: Activity, *, inside_run: bool = False) -> Iterator[None]:
        """Mark a compaction or branch summary in progress for the block.

        :param inside_run: the activity belongs to the active run (automatic compaction)
            rather than requiring an idle session.
        :raises SessionBusyError: the session is not idle (or, inside a run, another
            activity is in progress).
        """
        with self._changed:
            busy = self._activity is not None or (self._run_active and not inside_run)
            if busy:
                raise SessionBusyError(
                    "a run, compaction or navigation is already in progress; wait for it to finish"
                )
            self._activity = activity
        try:
            yield
        finally:
            with self._changed:
                self._activity = None
                self._changed.notify_all()

    # ------------------------------------------------------------------ waiting

    def wait_until_released(self, timeout: float | None = None) -> bool:
        """Block until no thread drives the session (everything started has settled).

        :return: False when ``timeout`` passed first.
        :raises SessionBusyError: called on the driver's own thread while it is not idle
            (it would wait for itself).
        """
        with self._changed:
            if self.is_driver():
                if not self.is_idle():
                    raise SessionBusyError(
                        "cannot wait for the session to become idle from inside its own run"
                    )
                return True

            def released() -> bool:
                return self._driver is None and self._handed_off == 0

            deadline = None if timeout is None else time.monotonic() + timeout
            # In slices: a signal the kernel hands to another thread (a tool's own os.kill,
            # say) only sets a flag, and a waiting main thread would see its Ctrl-C only
            # when the wait ends; each slice gives the interpreter a chance to run it.
            while True:
                left = _WAIT_SLICE if deadline is None else deadline - time.monotonic()
                if self._changed.wait_for(released, max(0.0, min(left, _WAIT_SLICE))):
                    return True
                if deadline is not None and time.monotonic() >= deadline:
                    return False
