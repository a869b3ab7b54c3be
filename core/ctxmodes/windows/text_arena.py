"""An append-only sequence of texts, stored so that substring search runs at memory speed.

History search scans up to hundreds of megabytes. Scanning many small strings is slowed by
where they happen to live in memory (reverse order or scattered allocations cost up to twice
the time); one large buffer is scanned at a steady rate. So texts are gathered into blocks
of about a million characters, encoded as UTF-8 and joined by a NUL separator, and a search
runs :class:`~ctxmodes.windows.byte_search.SearchableBytes` over a block, mapping each hit
back to its text by bisection; a newest-first search visits the blocks newest first. Texts
appended since the last block was sealed are searched one by one.

Searching the UTF-8 bytes finds exactly the texts whose characters contain the query's:
every character's encoding starts with a byte no encoding continues with, so an encoded
query can only match at a character boundary. (Lone surrogates, which session JSON may hold,
are encoded as three bytes like any other code point.) UTF-8 also keeps a block with a few
non-Latin characters as small as plain ASCII, where a ``str`` would take two or four bytes
per character. A query that contains the separator falls back to checking texts one by
one, so a hit never spans two texts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator

from ctxmodes.windows.byte_search import SearchableBytes

_SEPARATOR = "\x00"
_SEPARATOR_BYTE = b"\x00"
#: Characters gathered before the pending texts are sealed into a block.
BLOCK_CHARS = 1 << 20


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


class _Block:
    """Sealed texts ``first .. first + len(starts) - 2``, encoded and joined by the separator.

    ``starts[j]`` is the byte offset where text ``first + j`` begins; a final sentinel one
    past the block's end makes ``starts[j + 1] - 1`` the end of every text.
    """

    __slots__ = ("buffer", "first", "starts")

    def __init__(self, first: int, texts: list[str]) -> None:
        self.first = first
        encoded = [_encode(text) for text in texts]
        self.buffer = SearchableBytes(_SEPARATOR_BYTE.join(encoded))
        starts = [0] * (len(encoded) + 1)
        offset = 0
        for index, data in enumerate(encoded):
            starts[index] = offset
            offset += len(data) + 1
        starts[-1] = offset
        self.starts = starts

    @property
    def end(self) -> int:
        """One past the index of the block's last text."""
        return self.first + len(self.starts) - 1

    def text(self, index: int) -> str:
        local = index - self.first
        return _decode(self.buffer.data[self.starts[local] : self.starts[local + 1] - 1])

    def find(self, query: bytes, lo: int, hi: int) -> Iterator[int]:
        """Indexes in ``[lo, hi)`` whose text contains ``query``, ascending."""
        starts = self.starts
        begin, end = starts[lo - self.first], starts[hi - self.first] - 1
        find = self.buffer.find
        while begin < end:
            position = find(query, begin, end)
            if position < 0:
                return
            local = bisect_right(starts, position) - 1
            yield self.first + local
            begin = starts[local + 1]

    def rfind(self, query: bytes, lo: int, hi: int) -> Iterator[int]:
        """Indexes in ``[lo, hi)`` whose text contains ``query``, descending.

        Scans the block forwards and replays the hits backwards: forward search is the
        better tuned of the two, and a block is small enough to finish.
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
            self.seal()
        return index

    def seal(self) -> None:
        """Move the pending texts into a block now (for an arena that is complete: a
        block is searched faster than the same texts one by one)."""
        if not self._pending:
            return
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
        return self._block(index).text(index)

    def length(self, index: int) -> int:
        """The length of text ``index`` in characters."""
        return len(self.text(index))

    def search(self, query: str, lo: int, hi: int, *, reverse: bool = False) -> Iterator[int]:
        """Indexes in ``[lo, hi)`` whose text contains ``query`` (non-empty), ascending or
        descending; lazy, so a caller that stops early does not pay for the rest."""
        if _SEPARATOR in query:
            indexes = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
            return (i for i in indexes if query in self.text(i))
        if reverse:
            return self._search_rev(query, lo, hi)
        return self._search_fwd(query, lo, hi)

    def _search_fwd(self, query: str, lo: int, hi: int) -> Iterator[int]:
        encoded = _encode(query)
        first_block = bisect_right(self._block_firsts, lo) - 1 if self._blocks else 0
        for block in self._blocks[max(0, first_block) :]:
            if block.first >= hi:
                return
            if block.end > lo:
                yield from block.find(encoded, max(lo, block.first), min(hi, block.end))
        yield from self._pending_hits(query, max(lo, self._pending_first), hi, reverse=False)

    def _search_rev(self, query: str, lo: int, hi: int) -> Iterator[int]:
        yield from self._pending_hits(query, max(lo, self._pending_first), hi, reverse=True)
        encoded = _encode(query)
        last_block = bisect_right(self._block_firsts, hi - 1) - 1
        for block_index in range(min(last_block, len(self._blocks) - 1), -1, -1):
            block = self._blocks[block_index]
            if block.end <= lo:
                return
            yield from block.rfind(encoded, max(lo, block.first), min(hi, block.end))

    def _pending_hits(self, query: str, lo: int, hi: int, *, reverse: bool) -> Iterator[int]:
        if lo >= hi:
            return
        first = self._pending_first
        indexes = range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)
        pending = self._pending
        for index in indexes:
            if query in pending[index - first]:
                yield index
