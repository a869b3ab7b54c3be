"""Pi's RPC framing: records are JSON texts separated by LF only.

Only ``\\n`` ends a record (a trailing ``\\r`` is dropped); U+2028 and U+2029, valid inside
JSON strings, are part of the record, as in Pi's reader. Output lines are written whole
under one lock, since responses, session events and dialogs come from different threads.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Iterator
from typing import Any, BinaryIO

from ctxmodes.session.codec import dumps

_CHUNK = 65536


def input_records(stream: BinaryIO) -> Iterator[str]:
    """The records of ``stream`` as text, as they arrive; the last one need not end in LF.
    Bytes that are not UTF-8 become U+FFFD, as Node's decoder makes them."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    while True:
        chunk = stream.read1(_CHUNK) if hasattr(stream, "read1") else stream.read(_CHUNK)
        if not chunk:
            break
        pending += decoder.decode(chunk)
        *complete, pending = pending.split("\n")
        for record in complete:
            yield record.removesuffix("\r")
    pending += decoder.decode(b"", final=True)
    if pending:
        yield pending.removesuffix("\r")


class OutputLines:
    """Standard output of RPC mode: one JSON value a line, written whole and flushed.

    While a command's response is due (:meth:`responding`), session events that other
    threads emit wait and follow the response, so a client sees ``prompt``'s response before
    the run's first event, as Pi writes them; what the responding thread emits itself goes
    out at once.
    """

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._responder: int | None = None
        self._waiting: list[bytes] = []
        self._closed = False

    def write(self, value: Any) -> None:
        """Write ``value`` as one line now (a response or a dialog)."""
        self._write_lines([dumps(value) + b"\n"])

    def write_event(self, value: Any) -> None:
        """Write a session event, after the response being made on another thread."""
        line = dumps(value) + b"\n"
        with self._lock:
            if self._responder is not None and self._responder != threading.get_ident():
                self._waiting.append(line)
            else:
                self._write_locked([line])

    def responding(self) -> _Responding:
        """A context in which other threads' events wait; they go out when it ends."""
        return _Responding(self)

    def close(self) -> None:
        """Write nothing more (the client stopped reading, or the mode ended)."""
        with self._lock:
            self._closed = True

    def _write_lines(self, lines: list[bytes]) -> None:
        with self._lock:
            self._write_locked(lines)

    def _write_locked(self, lines: list[bytes]) -> None:
        if self._closed:
            return
        try:
            for line in lines:
                self._out.write(line)
            self._out.flush()
        except (BrokenPipeError, ValueError):
            # The client closed its end: nobody reads what follows.
            self._closed = True

    def _begin(self) -> None:
        with self._lock:
            self._responder = threading.get_ident()

    def _end(self) -> None:
        with self._lock:
            self._responder = None
            waiting, self._waiting = self._waiting, []
            self._write_locked(waiting)


class _Responding:
    def __init__(self, lines: OutputLines) -> None:
        self._lines = lines

    def __enter__(self) -> None:
        self._lines._begin()

    def __exit__(self, *exc: object) -> None:
        self._lines._end()
