"""An append-only sequence of texts, stored so that substring search runs at memory speed.

History search scans up to hundreds of megabytes. Scanning many small strings is slowed by
where they happen to live in memory (reverse order or scattered allocations cost up to twice
the time); one large string is scanned at a steady rate. So texts are gathered into blocks
of about a million characters, joined by a NUL separator, and a search runs ``str.find``
over a block, mapping each hit back to its text by bisection; a newest-first search visits
the blocks newest first. Texts appended since the last block was sealed are searched one
by one.

A query that contains the separator falls back to checking texts one by one, so a hit never
spans two texts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

_SEPARATOR = "\x00"
#: Characters gathered before the pending texts are sealed into a block.
BLOCK_CHARS = 1 << 20


class _Block:
    """Sealed texts ``first .. first + len(starts) - 2``, joined by the separator.

    ``starts[j]`` is where text ``first + j`` begins; a final sentinel one past the block's
    end makes ``starts[j + 1] - 1`` the end of every text.
    """

    __slots__ = ("first", "starts", "text")

    def __init__(self, first: int, texts: list[str]) -> None:
        self.first = first
        self.text = _SEPARATOR.join(texts)
        starts = [0] * (len(texts) + 1)
        offset = 0
        for index, text in enumerate(texts):
            starts[index] = offset
            offset += len(text) + 1
        starts[-1] = offset
        self.starts = starts

    def bounds(self, index: int) -> tuple[int, int]:
        local = index - self.first
        return self.starts[local], self.starts[local + 1] - 1

    def find(self, query: str, lo: int, hi: int) -> Iterator[int]:
        """Indexes in ``[lo, hi)`` whose text contains ``query``, ascending."""
        starts = self.starts
        begin, end = starts[lo - self.first], starts[hi - self.first] - 1
        while begin < end:
            position = self.text.find(query, begin, end)
            if position < 0:
                return
            local = bisect_right(starts, position) - 1
            yield self.first + local
            begin = starts[local + 1]

    def rfind(self, query: str, lo: int, hi: int) -> Iterator[int]:
        """Indexes in ``[lo, hi)`` whose text contains ``query``, descending.

        Scans the block forwards and replays the hits backwards: CPython's forward search
        is the better tuned of the two, and a block is small enough to finish.
        """
        return reversed(list(self.find(query, lo, hi)))


class TextArena:
    """Texts numbered from 0 in append order; read them back or search ranges of them."""

    __slots__ = ("_block_firsts", "_blocks", "_pending", "_pending_chars", "_pending_first")

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self._block_firsts: list[int] = []
        self._pending: list[str] = []
        self._pending_first = 0
        self._pending_chars = 0

    def __len__(self) -> int:
        return self._pending_first + len(self._pending)

    def append(self, text: str) -> int:
        """Store ``text``; return its index."""
        index = len(self)
        self._pending.append(text)
        self._pending_chars += len(text) + 1
        if self._pending_chars >= BLOCK_CHARS:
            self._seal()
        return index

    def _seal(self) -> None:
        self._blocks.append(_Block(self._pending_first, self._pending))
        self._block_firsts.append(self._pending_first)
        self._pending_first += len(self._pending)
        self._pending = []
        self._pending_chars = 0

    def _block(self, index: int) -> _Block:
        return self._blocks[bisect_right(self._block_firsts, index) - 1]

    def text(self, index: int) -> str:
        if index >= self._pending_first:
            return self._pending[index - self._pending_first]
        block = self._block(index)
        begin, end = block.bounds(index)
        return block.text[begin:end]

    def length(self, index: int) -> int:
        if index >= self._pending_first:
            return len(self._pending[index - self._pending_first])
        begin, end = self._block(index).bounds(index)
        return end - begin

    def search(self, query: str, lo: int, hi: int, *, reverse: bool = False) -> Iterator[int]:
        """Indexes in ``[lo, hi)`` whose text contains ``query`` (non-empty), ascending or
        descending; lazy, so a caller that stops early does not pay for the rest."""
        if _SEPARATOR in query:
            indexes = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
            return (i for i in indexes if query in self.text(i))
        return self._search_rev(query, lo, hi) if reverse else self._search_fwd(query, lo, hi)

    def _search_fwd(self, query: str, lo: int, hi: int) -> Iterator[int]:
        first_block = bisect_right(self._block_firsts, lo) - 1 if self._blocks else 0
        for block in self._blocks[max(0, first_block) :]:
            block_end = block.first + len(block.starts) - 1
            if block.first >= hi:
                return
            if block_end > lo:
                yield from block.find(query, max(lo, block.first), min(hi, block_end))
        yield from self._pending_hits(query, max(lo, self._pending_first), hi, reverse=False)

    def _search_rev(self, query: str, lo: int, hi: int) -> Iterator[int]:
        yield from self._pending_hits(query, max(lo, self._pending_first), hi, reverse=True)
        last_block = bisect_right(self._block_firsts, hi - 1) - 1
        for block_index in range(min(last_block, len(self._blocks) - 1), -1, -1):
            block = self._blocks[block_index]
            block_end = block.first + len(block.starts) - 1
            if block_end <= lo:
                return
            yield from block.rfind(query, max(lo, block.first), min(hi, block_end))

    def _pending_hits(self, query: str, lo: int, hi: int, *, reverse: bool) -> Iterator[int]:
        if lo >= hi:
            return
        first = self._pending_first
        indexes = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
        pending = self._pending
        for index in indexes:
            if query in pending[index - first]:
                yield index
