"""Cooperative cancellation shared by the run loop, model streams and tools.

An :class:`AbortController` belongs to whoever may cancel work (the host, for one run); the
work itself only sees its :class:`AbortSignal`. Aborting is thread-safe and idempotent: any
thread may call :meth:`AbortController.abort`, the signal flips once, and every registered
callback runs exactly once on the aborting thread. Callbacks are for waking or stopping
blocked work (killing a subprocess, closing an HTTP stream); code that merely loops checks
:attr:`AbortSignal.aborted` or calls :meth:`AbortSignal.raise_if_aborted`.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from ctxmodes import library_log
from ctxmodes.errors import CtxmodesError

_log = library_log.logger(__name__)

DEFAULT_REASON = "aborted"


class AbortedError(CtxmodesError):
    """Raised by :meth:`AbortSignal.raise_if_aborted` once the signal has been aborted."""


class AbortSignal:
    """Read side of a cancellation request; see the module docstring for the contract."""

    __slots__ = ("_callbacks", "_event", "_lock", "_reason")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        """Why the signal was aborted; ``None`` while it has not been."""
        return self._reason

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` once when the signal aborts (at once if it already has).

        :return: a function that unregisters the callback; calling it after the callback ran
            (or more than once) does nothing. Long-lived signals need this so finished work
            does not leave callbacks behind.
        """
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        _run_callback(callback)
        return _noop

    def raise_if_aborted(self) -> None:
        """Raise :class:`AbortedError` (carrying the reason) if the signal has aborted."""
        if self._event.is_set():
            raise AbortedError(self._reason or DEFAULT_REASON)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal aborts or ``timeout`` seconds pass; True if it aborted."""
        return self._event.wait(timeout)

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock, contextlib.suppress(ValueError):  # already ran or removed
            self._callbacks.remove(callback)

    def _abort(self, reason: str) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run_callback(callback)


class AbortController:
    """Owns one :class:`AbortSignal` and is the only way to abort it."""

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        return self._signal

    def abort(self, reason: str = DEFAULT_REASON) -> None:
        """Abort the signal; later calls are ignored (the first reason is kept)."""
        self._signal._abort(reason)


def _run_callback(callback: Callable[[], None]) -> None:
    # The aborting thread is usually not the one doing the work (a UI thread, a timer); one
    # failing callback must neither stop the others nor surface in that unrelated caller.
    try:
        callback()
    except Exception:
        _log.exception("abort callback %r failed", callback)


def _noop() -> None:
    return None
