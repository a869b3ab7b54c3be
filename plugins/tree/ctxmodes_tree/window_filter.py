"""An archived window's search filter: one gram filter for the window, one per block.

A window's :class:`~ctxmodes_tree.gram_filter.GramFilter` tells that no item of the window
contains a query. When it lets a query pass, a search would read the whole window (up to
Tree's per-archive bounds), so a window longer than :data:`BLOCK_ENTRIES` entries also keeps
one filter per block of that many consecutive entries, counted from its newest entry (the
end of the archived path, which the kept entries always share however the bounds cut
them), and a search reads only the blocks whose filter lets the query pass. An item lies
within one entry, so within one block: every gram of its text is in its block's filter, and
cutting the window into blocks loses no hit (grams that straddle two items, which no hit
needs, may be lost at a cut).

Blocks are asked only after the window's filter let the query pass, and the sum of their
distinct grams is several times the window's, so they keep :data:`BLOCK_BITS_PER_GRAM` bits
per distinct gram, a quarter of the window's, to keep the cache small: about two bits in
five are set, so a block without a hit lets a query pass with a probability of about 0.39
per gram of the query it lacks (6 % for three such grams, 0.4 % for six). A block let
through costs a read of its entries, never a hit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from ctxmodes_tree.gram_filter import BITS_PER_GRAM, GramFilter, grams_of_texts

#: Archived entries per block: the most a search reads of a window for a block that may
#: hold a hit (a search reads the blocks' entries in the growing reads it always makes).
BLOCK_ENTRIES: Final = 128
#: Bits of a block's bitmap per distinct gram.
BLOCK_BITS_PER_GRAM: Final = 2


class SearchFilter(Protocol):
    """What a search asks a window's filter, wherever the filter is kept."""

    @property
    def block_entries(self) -> int:
        """Entries per block, counted from the window's newest entry."""
        ...

    def may_contain(self, query: str) -> bool:
        """``False`` only when no text of the window contains ``query``."""
        ...

    def blocks_may_contain(self, query: str) -> list[bool]:
        """For each block, newest first, ``False`` only when no text of it contains
        ``query`` (empty when the window keeps no filter per block)."""
        ...


class WindowFilter:
    """A window's gram filter and those of its blocks (newest first; none for a window of
    one block), made in this process."""

    __slots__ = ("block_entries", "blocks", "whole")

    def __init__(self, whole: GramFilter, blocks: Sequence[GramFilter], block_entries: int) -> None:
        self.whole = whole
        self.blocks = list(blocks)
        self.block_entries = block_entries

    @classmethod
    def of_blocks(cls, blocks: Iterable[Iterable[str]], block_entries: int) -> WindowFilter:
        """The filter of a window whose item texts, block by block (newest block first),
        are ``blocks``; each text is read once."""
        whole: set[int] = set()
        made: list[GramFilter] = []
        for texts in blocks:
            found = grams_of_texts(texts)
            whole |= found
            made.append(GramFilter.of_grams(found, BLOCK_BITS_PER_GRAM))
        return cls(
            GramFilter.of_grams(whole, BITS_PER_GRAM),
            made if len(made) > 1 else [],
            block_entries,
        )

    def may_contain(self, query: str) -> bool:
        return self.whole.may_contain(query)

    def blocks_may_contain(self, query: str) -> list[bool]:
        return [block.may_contain(query) for block in self.blocks]

    def bitmap(self) -> bytes:
        """The window's bitmap, then each block's, as they are persisted."""
        return b"".join(bytes(found.bitmap) for found in (self.whole, *self.blocks))


def window_filter_of(positioned: Iterable[tuple[int, str]], total: int) -> WindowFilter:
    """The filter of a window of ``total`` entries whose items' texts are ``positioned``
    (each with its entry's position, oldest first)."""
    size = BLOCK_ENTRIES
    grouped: list[list[str]] = [[] for _ in range(-(-total // size))]
    for position, text in positioned:
        grouped[(total - 1 - position) // size].append(text)
    return WindowFilter.of_blocks(grouped, size)


def entries_to_read(found: SearchFilter, query: str | None, kept: Sequence[str]) -> Sequence[str]:
    """The entries of ``kept`` (oldest first) in the blocks that may hold ``query``, in
    order: ``kept`` itself when every block may."""
    flags = found.blocks_may_contain(query) if query else []
    blocks = -(-len(kept) // found.block_entries)
    if len(flags) < blocks or all(flags[:blocks]):
        return kept
    size, end = found.block_entries, len(kept)
    chosen: list[str] = []
    for block in reversed(range(blocks)):
        if flags[block]:
            chosen.extend(kept[max(0, end - (block + 1) * size) : end - block * size])
    return chosen
