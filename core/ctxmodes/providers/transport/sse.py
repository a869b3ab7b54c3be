"""Server-sent events from an httpx response, as Pi's SSE readers parse them.

Lines and fields follow the WHATWG event-stream rules: a line ends at ``\\r\\n``, ``\\r`` or
``\\n`` (also when ``\\r\\n`` is split between two reads), a leading byte-order mark is
dropped, a line starting with ``:`` is a comment, ``field: value`` loses one space after the
colon, ``data`` lines join with ``\\n``. Pi's readers (the OpenAI SDK's and pi-ai's own for
Anthropic) keep only ``event`` and ``data`` (``id`` and ``retry`` change nothing they
yield) and, unlike the WHATWG rules, dispatch a block that names an event but has no data.

A stream may end inside its last event (no blank line after it): pi-ai's Anthropic and Codex
readers dispatch it, the OpenAI SDK's does not; :func:`iter_events` does either.

Our own reader rather than httpx-sse's: its public ``EventSource`` refuses a body whose
content type is not ``text/event-stream`` (Pi reads any) and always drops an unterminated
last event, and its per-line decoder is slower than reading a whole received piece at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["EventReader", "ServerSentEvent", "iter_events"]

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event: its ``event`` field (``""`` when none) and its joined data."""

    event: str
    data: str


class EventReader:
    """Reads events from the text of a stream, piece by piece as it arrives.

    Each piece is scanned once: an unfinished line waits for the next piece, which is
    not scanned again with it (a long line arriving in many pieces costs its length).
    """

    def __init__(self) -> None:
        self._partial: list[str] = []
        self._after_cr = False  # the last piece ended in "\r": a "\n" next ends no line
        self._started = False
        self._event = ""
        self._data: list[str] = []

    def feed(self, text: str) -> list[ServerSentEvent]:
        """The events that ``text`` completes."""
        if not text:
            return []
        if not self._started:
            self._started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        self._after_cr = text.endswith("\r")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        if len(lines) == 1:  # no line ends here
            self._partial.append(text)
            return []
        if self._partial:
            lines[0] = "".join(self._partial) + lines[0]
            self._partial = []
        tail = lines.pop()
        if tail:
            self._partial.append(tail)
        return self._lines(lines)

    def end(self) -> list[ServerSentEvent]:
        """The event the stream ended inside, if any (its last line read as complete)."""
        lines = ["".join(self._partial)] if self._partial else []
        self._partial = []
        events = self._lines(lines)
        if self._event or self._data:
            events.append(self._dispatch())
        return events

    def _dispatch(self) -> ServerSentEvent:
        event = ServerSentEvent(self._event, "\n".join(self._data))
        self._event = ""
        self._data = []
        return event

    def _lines(self, lines: Iterable[str]) -> list[ServerSentEvent]:
        events: list[ServerSentEvent] = []
        for line in lines:
            if not line:
                if self._event or self._data:
                    events.append(self._dispatch())
                continue
            if line[0] == ":":
                continue
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value
        return events


def iter_events(
    texts: Iterable[str], *, dispatch_at_end: bool = False
) -> Iterator[ServerSentEvent]:
    """Every event of a body read as ``texts`` (an httpx response's ``iter_text()``); with
    ``dispatch_at_end`` also one the stream ends inside."""
    reader = EventReader()
    for text in texts:
        yield from reader.feed(text)
    if dispatch_at_end:
        yield from reader.end()
