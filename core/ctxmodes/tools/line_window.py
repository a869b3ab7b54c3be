"""The lines a ``read`` call asks for, taken from a file of any size in bounded memory.

Pi reads the whole file, splits it on ``\\n`` and cuts the lines from ``offset`` to
``offset + limit`` down to 2,000 lines or 50 KB; its answer also names the file's line
count and the window's totals. :func:`scan_window` gives the same answer from the file's
text in pieces: it keeps only the beginning of the window (enough for
:func:`~ctxmodes.tools.output.truncate_head` to keep what it would keep of the whole window)
and counts the rest, so a log of gigabytes costs a read its time, not its size in memory.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import BinaryIO, Final

from ctxmodes.tools.output import Truncation, truncate_head, utf8_len

#: How much of the file is decoded at a time.
CHUNK_BYTES: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class LineWindow:
    """What a read needs of a file: its line count and the window of lines asked for.

    :ivar total_lines: the file's lines as Pi counts them (``"a\\n"`` has two: the last is
        empty).
    :ivar head: the window's text (its lines joined by ``\\n``), whole when it is within the
        limits, else a beginning long enough to be cut as the whole would be.
    :ivar window_lines: the window's lines as a truncation counts them (a trailing newline
        does not start another).
    :ivar window_bytes: the window's text's size in UTF-8 bytes.
    :ivar first_line_bytes: the size of the window's first line in UTF-8 bytes.
    """

    total_lines: int
    head: str
    window_lines: int
    window_bytes: int
    first_line_bytes: int

    def truncation(self, max_lines: int, max_bytes: int) -> Truncation:
        """:func:`~ctxmodes.tools.output.truncate_head` of the whole window."""
        cut = truncate_head(self.head, max_lines, max_bytes)
        return replace(cut, total_lines=self.window_lines, total_bytes=self.window_bytes)


def decoded_chunks(
    stream: BinaryIO, first: bytes = b"", *, between: Callable[[], None] | None = None
) -> Iterator[str]:
    """The text of ``first`` then of the rest of ``stream``, as UTF-8 with invalid bytes
    replaced (exactly as decoding it whole would), a piece at a time; ``between`` is called
    before each read (to stop a long read when the call is aborted)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    data = first
    while True:
        if data:
            yield decoder.decode(data)
        if between is not None:
            between()
        data = stream.read(CHUNK_BYTES)
        if not data:
            break
    yield decoder.decode(b"", final=True)


def scan_window(
    pieces: Iterable[str], start: int, stop: int | None, max_lines: int, max_bytes: int
) -> LineWindow:
    """The window of lines ``start`` (0-based) to ``stop`` (exclusive; ``None``: the end)
    of the text whose pieces are ``pieces``, kept as far as a cut to ``max_lines`` lines and
    ``max_bytes`` bytes needs.

    The kept beginning ends before the window's ``max_lines + 2``-th newline or once it
    passes ``max_bytes`` (one character further when it would end on a newline, so that the
    line after it shows): whenever the whole window is over a limit, so is what is kept, its
    lines before that point are the window's own, and the line a cut by size stops at is
    there.
    """
    scan = _Scan(start, stop, keep_newlines=max_lines + 1, keep_bytes=max_bytes)
    for piece in pieces:
        scan.feed(piece)
    return scan.result()


class _Scan:
    """The running state of :func:`scan_window`."""

    def __init__(
        self, start: int, stop: int | None, *, keep_newlines: int, keep_bytes: int
    ) -> None:
        self.start = start
        self.stop = stop
        self.keep_newlines = keep_newlines
        self.keep_bytes = keep_bytes
        self.line = 0  # the line the next character belongs to: newlines seen so far
        self.kept: list[str] = []
        self.kept_newlines = 0
        self.kept_bytes = 0
        self.keeping = True
        self.one_more = False
        self.window_newlines = 0
        self.window_bytes = 0
        self.window_ends_with_newline = False
        self.first_line_bytes = 0
        self.in_first_line = True

    def feed(self, text: str) -> None:
        position = 0
        if self.line < self.start:
            needed = self.start - self.line
            found = text.count("\n")
            if found < needed:
                self.line += found
                return
            position = _after_newline(text, 0, needed)
            self.line = self.start
        if self.stop is None or self.line < self.stop:
            end = len(text)
            if self.stop is not None:
                needed = self.stop - self.line
                if text.count("\n", position) >= needed:
                    end = _after_newline(text, position, needed) - 1
            self._take(text[position:end])
            if end == len(text):
                return
            self.line += 1  # the newline closing the window
            position = end + 1
        self.line += text.count("\n", position)

    def _take(self, part: str) -> None:
        """``part`` of the window's text, in order."""
        if not part:
            return
        newlines = part.count("\n")
        self.line += newlines
        self.window_newlines += newlines
        self.window_bytes += utf8_len(part)
        self.window_ends_with_newline = part.endswith("\n")
        if self.in_first_line:
            closing = part.find("\n")
            self.first_line_bytes += utf8_len(part if closing < 0 else part[:closing])
            self.in_first_line = closing < 0
        if self.keeping:
            self._keep(part)

    def _keep(self, part: str) -> None:
        if self.one_more:
            # The cut ended on a newline: the line after it must show, however short, or
            # the kept text would end before the line the limit falls on.
            self.kept.append(part[:1])
            self.keeping = self.one_more = False
            return
        end = len(part)
        room = self.keep_newlines - self.kept_newlines
        if part.count("\n") > room:
            end = _after_newline(part, 0, room + 1) - 1
            self.keeping = False
        if self.kept_bytes + utf8_len(part[:end]) > self.keep_bytes:
            end = len(_beyond_bytes(part[:end], self.keep_bytes - self.kept_bytes))
            self.keeping = False
            if part[end - 1] == "\n":
                if end < len(part):
                    end += 1
                else:
                    self.keeping = self.one_more = True
        kept = part[:end]
        self.kept.append(kept)
        self.kept_newlines += kept.count("\n")
        self.kept_bytes += utf8_len(kept)

    def result(self) -> LineWindow:
        if self.window_bytes == 0:
            lines = 0
        else:
            lines = self.window_newlines + (0 if self.window_ends_with_newline else 1)
        return LineWindow(
            total_lines=self.line + 1,
            head="".join(self.kept),
            window_lines=lines,
            window_bytes=self.window_bytes,
            first_line_bytes=self.first_line_bytes,
        )


def _after_newline(text: str, position: int, count: int) -> int:
    """The index just after the ``count``-th newline of ``text`` from ``position`` (there
    are at least that many)."""
    rest = text[position:].split("\n", count)[-1]
    return len(text) - len(rest)


def _beyond_bytes(text: str, budget: int) -> str:
    """The shortest beginning of ``text`` over ``budget`` UTF-8 bytes (``text`` is)."""
    low, high = 0, len(text)
    while low < high:  # the first length whose beginning is over the budget
        middle = (low + high) // 2
        if utf8_len(text[:middle]) > budget:
            high = middle
        else:
            low = middle + 1
    return text[:low]
