"""Runs of consecutive entry indexes as machine integers, built a byte column at a time.

``array("q", range(start, stop))`` makes (and drops) an ``int`` object per index, about 30 ns
each: at a million entries that is tens of milliseconds for each such array an open builds
(every entry's parent index, the active path, its ids). The same array's bytes can be laid out
a column at a time instead: the lowest byte of consecutive numbers cycles through 0-255, each
higher byte holds one value for a whole block of them, and a strided slice assignment writes a
column in C.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain
from typing import Final, overload

__all__ = ["IndexRuns", "consecutive"]

_WIDTH: Final = array("q").itemsize
# Byte columns from the least significant, in the machine's order.
_COLUMNS: Final = range(_WIDTH) if sys.byteorder == "little" else range(_WIDTH - 1, -1, -1)
_EVERY_BYTE: Final = bytes(range(256))
# Below this many, building from a range costs less than laying out columns.
_SHORT: Final = 64


def consecutive(start: int, stop: int) -> array[int]:
    """``array("q", range(start, stop))``, for ``0 <= start``."""
    count = stop - start
    if count <= _SHORT:
        return array("q", range(start, max(start, stop)))
    out = array("q", [0]) * count
    with memoryview(out).cast("B") as raw:
        for power, column in enumerate(_COLUMNS):
            block = 256**power
            if block > stop:
                break  # this byte and the higher ones are zero throughout
            if power == 0:
                turn = start % 256
                digits = (_EVERY_BYTE[turn:] + _EVERY_BYTE[:turn]) * (count // 256 + 1)
            else:
                digits = b"".join(_runs(start, count, block))
            raw[column::_WIDTH] = digits[:count]
    return out


def _runs(start: int, count: int, block: int) -> list[bytes]:
    """The byte that counts blocks of ``block`` numbers, for ``count`` numbers from
    ``start``: one run of a repeated byte per block."""
    value, offset = divmod(start, block)
    runs: list[bytes] = []
    length = block - offset
    while count > 0:
        taken = min(length, count)
        runs.append(bytes((value % 256,)) * taken)
        count -= taken
        value += 1
        length = block
    return runs


class IndexRuns(Sequence[int]):
    """Entry indexes held as the runs of consecutive ones they are made of: a path through a
    session is a few long runs, which this holds in a few objects however long they are,
    and whose ids are slices of the list of ids (no array of a million indexes to build,
    copy, or check run by run)."""

    __slots__ = ("_ends", "runs")

    def __init__(self, runs: Iterable[range]) -> None:
        #: The runs, in order, each ascending by one and none empty.
        self.runs: list[range] = [run for run in runs if run]
        # Where each run ends among the indexes.
        self._ends: list[int] = list(accumulate(map(len, self.runs)))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(self.runs)

    @overload
    def __getitem__(self, item: int) -> int: ...
    @overload
    def __getitem__(self, item: slice) -> Sequence[int]: ...
    def __getitem__(self, item: int | slice) -> int | Sequence[int]:
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step != 1:
                return [self[position] for position in range(start, stop, step)]
            return self.between(start, stop)
        position = range(len(self))[item]  # IndexError, negative positions
        run = bisect_right(self._ends, position)
        return self.runs[run][position - (self._ends[run - 1] if run else 0)]

    def between(self, start: int, stop: int) -> IndexRuns:
        """The indexes at positions ``start`` to ``stop`` (``0 <= start``, ``stop <= len``)."""
        return IndexRuns(self._cut(start, stop))

    def _cut(self, start: int, stop: int) -> Iterator[range]:
        run = bisect_right(self._ends, start)
        begun = self._ends[run - 1] if run else 0
        while start < stop:
            taken = self.runs[run][start - begun : stop - begun]
            yield taken
            start += len(taken)
            begun = self._ends[run]
            run += 1
