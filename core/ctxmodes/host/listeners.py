"""The listener list of a session (see :mod:`ctxmodes.host.records`)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ctxmodes import library_log
from ctxmodes.host.records import HostRecord, Listener

_log = library_log.logger(__name__)


class Listeners:
    """Thread-safe subscription; records are delivered in subscription order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: tuple[Listener, ...] = ()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener``; returns a function that removes it again."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = tuple(item for item in self._listeners if item is not listener)

        return unsubscribe

    def emit(self, record: HostRecord) -> None:
        # An observer's failure must not break the run it observes.
        for listener in self._listeners:
            try:
                listener(record)
            except Exception:
                _log.exception("session listener %r failed on %s", listener, record.type)
