"""A compact filter that proves a window's item texts cannot contain a query.

``history.search_contents`` keeps the items whose content contains the query, literally and
case-sensitively. Every text is seen as its UTF-8 bytes (a lone surrogate, which session
JSON may hold, as the three bytes of any other code point, as
:mod:`ctxmodes.windows.text_arena` encodes it): that encoding works character by character,
so when a text contains the query, its bytes contain the query's bytes, and with them every
run of :data:`GRAM_BYTES` consecutive bytes of the query (a *gram*). The filter records the
grams of a window's texts in a bitmap, one bit per gram picked by a hash; when one of the
query's grams finds its bit unset, no text of the window contains the query.

So the answer "cannot contain" is exact and the answer "may contain" is only a hint, which
the caller settles by reading the texts: grams of different texts hash to the same bit, and
grams that straddle two texts are recorded as well (texts are joined before they are cut
into grams), so a query can pass without a hit, never fail with one. A query shorter than a
gram cannot be judged and always passes. With :data:`BITS_PER_GRAM` bits per distinct gram
at most one bit in eight is set, so a query absent from the window passes with a probability
of at most 0.12 per gram it has: about 0.2 % for a query of six ASCII characters (three
grams), under one in ten million for twelve.

Grams are read four bytes at a time as native unsigned integers (``memoryview.cast``): one
C loop per byte of text. A filter is therefore tied to the machine's byte order, which a
persisted filter records (:mod:`ctxmodes_tree.search_cache`).
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterable
from itertools import repeat
from operator import and_, mul, rshift
from typing import Final

#: Bytes per gram: the shortest query (in UTF-8 bytes) a filter can judge.
GRAM_BYTES: Final = 4
#: Bits of bitmap per distinct gram (rounded up to whole 64-bit words).
BITS_PER_GRAM: Final = 8
#: How many bytes of text are cut into grams at a time (whole texts, joined).
_CHUNK_BYTES: Final = 1 << 20
#: Fibonacci hashing: the high bits of a gram times this constant spread neighbouring grams.
_MULTIPLIER: Final = 0x9E3779B1
_WORD_BITS: Final = 64
#: The byte order the grams' integers are read in.
BYTE_ORDER: Final = sys.byteorder


def encoded(text: str) -> bytes:
    """A text's bytes as the filter sees them (UTF-8, lone surrogates encoded)."""
    return text.encode("utf-8", "surrogatepass")


def grams(data: bytes) -> set[int]:
    """The distinct grams of ``data``, each as a native unsigned integer."""
    found: set[int] = set()
    view = memoryview(data)
    length = len(data)
    # Four aligned passes, one per starting offset, give the gram at every position.
    for offset in range(min(GRAM_BYTES, length - GRAM_BYTES + 1)):
        end = offset + (length - offset) // GRAM_BYTES * GRAM_BYTES
        found.update(view[offset:end].cast("I"))
    return found


def _bit(gram: int, size: int) -> int:
    # Lemire's multiply-shift maps the 32-bit hash onto ``size`` bits without a division.
    return ((gram * _MULTIPLIER) & 0xFFFFFFFF) * size >> 32


def _bitmap(found: set[int], size: int) -> bytes:
    """The bitmap of ``size`` bits with the bit of every gram in ``found`` set."""
    # The bits of every gram, computed and set in C loops (map over operators): one byte
    # per bit first, then packed eight to a byte with whole-buffer integer operations.
    hashed = map(and_, map(mul, found, repeat(_MULTIPLIER)), repeat(0xFFFFFFFF))
    bits = map(rshift, map(mul, hashed, repeat(size)), repeat(32))
    flags = bytearray(size)
    deque(map(flags.__setitem__, bits, repeat(1)), maxlen=0)
    packed = 0
    for position in range(8):
        # Each byte of this slice is 0 or 1, so the shifted slices never overlap.
        packed |= int.from_bytes(flags[position::8], "little") << position
    return packed.to_bytes(size // 8, "little")


class GramFilter:
    """The gram bitmap of a set of texts (see the module docstring).

    :param size: bits in the bitmap (a multiple of 64).
    :param bitmap: ``size // 8`` bytes; bit ``i`` is bit ``i % 8`` of byte ``i // 8``.
    """

    __slots__ = ("bitmap", "size")

    def __init__(self, size: int, bitmap: bytes | memoryview) -> None:
        if size <= 0 or size % _WORD_BITS or len(bitmap) * 8 != size:
            raise ValueError("a gram bitmap holds a positive number of 64-bit words")
        self.size = size
        self.bitmap = bitmap

    @classmethod
    def of_texts(cls, texts: Iterable[str]) -> GramFilter:
        """The filter of ``texts``, reading each once."""
        return cls.of_grams(grams_of_texts(texts), BITS_PER_GRAM)

    @classmethod
    def of_grams(cls, found: set[int], bits_per_gram: int) -> GramFilter:
        """The filter of the grams ``found``, with ``bits_per_gram`` bits for each."""
        words = max(1, -(-len(found) * bits_per_gram // _WORD_BITS))
        size = words * _WORD_BITS
        return cls(size, _bitmap(found, size))

    def may_contain(self, query: str) -> bool:
        """``False`` only when no text of the filter contains ``query``."""
        bits = query_bits(query, self.size)
        bitmap = self.bitmap
        return bits is None or all(bitmap[bit >> 3] >> (bit & 7) & 1 for bit in bits)


def grams_of_texts(texts: Iterable[str]) -> set[int]:
    """The distinct grams of ``texts`` joined (each read once)."""
    found: set[int] = set()
    chunk: list[bytes] = []
    pending = 0
    for text in texts:
        data = encoded(text)
        chunk.append(data)
        pending += len(data) + 1
        if pending >= _CHUNK_BYTES:
            found |= grams(b"\x00".join(chunk))
            chunk, pending = [], 0
    if chunk:
        found |= grams(b"\x00".join(chunk))
    return found


def query_bits(query: str, size: int) -> list[int] | None:
    """The bits a filter of ``size`` bits must all have set for a text to contain ``query``
    (``None`` for a query shorter than a gram, which cannot be judged)."""
    data = encoded(query)
    if len(data) < GRAM_BYTES:
        return None
    return [_bit(gram, size) for gram in grams(data)]
