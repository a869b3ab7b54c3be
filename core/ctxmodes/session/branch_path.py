"""A parent chain as runs of consecutive file positions, read without listing its ids.

Work is appended one entry after the other, so a chain of a million entries is a handful of
runs ("each entry's parent is the line before it"). :class:`BranchPath` keeps those runs and
answers length, membership, position and slicing in O(runs), whatever the chain's length;
only iterating it, or indexing single positions, touches ids. It is a snapshot: entries are
immutable and only ever appended, so the runs of a chain never change.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import overload


class BranchPath(Sequence[str]):
    """Ids from a root to one entry, root first (a read-only ``Sequence[str]``).

    :param ids: the store's ids in file order (positions are indexes into it).
    :param position_of_id: the file position of an id (``None`` when unknown); every entry
        of a chain is the one its id resolves to, as parent links resolve by id.
    :param runs: the chain's file positions, root first, as ascending ranges.
    """

    __slots__ = ("_ids", "_length", "_offsets", "_position_of_id", "_runs")

    def __init__(
        self,
        ids: Sequence[str],
        position_of_id: Callable[[str], int | None],
        runs: Sequence[range],
    ) -> None:
        self._ids = ids
        self._position_of_id = position_of_id
        self._runs = tuple(run for run in runs if run)
        # Where each run starts along the chain; the last value is the chain's length.
        self._offsets = list(accumulate((len(run) for run in self._runs), initial=0))
        self._length = self._offsets.pop()

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, key: int) -> str: ...

    @overload
    def __getitem__(self, key: slice) -> BranchPath: ...

    def __getitem__(self, key: int | slice) -> str | BranchPath:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._length)
            if step != 1:
                raise ValueError("a branch path slices with step 1 only")
            return self._between(start, stop)
        position = key + self._length if key < 0 else key
        if not 0 <= position < self._length:
            raise IndexError("branch path index out of range")
        run = bisect_right(self._offsets, position) - 1
        return self._ids[self._runs[run][position - self._offsets[run]]]

    def __iter__(self) -> Iterator[str]:
        ids = self._ids
        for run in self._runs:
            yield from ids[run.start : run.stop]

    def __reversed__(self) -> Iterator[str]:
        ids = self._ids
        for run in reversed(self._runs):
            yield from reversed(ids[run.start : run.stop])

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.position(value) is not None

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        found = self.position(value) if isinstance(value, str) else None
        first, last, _ = slice(start, stop).indices(self._length)
        if found is None or not first <= found < last:
            raise ValueError(f"{value!r} is not on the branch path")
        return found

    def __eq__(self, other: object) -> bool:
        # Like a tuple: equal to another branch path with the same ids in the same order.
        if not isinstance(other, BranchPath):
            return NotImplemented
        if self._ids is other._ids and self._runs == other._runs:
            return True
        return len(self) == len(other) and all(map(str.__eq__, self, other))

    def __hash__(self) -> int:
        # Consistent with __eq__ without listing the ids.
        return hash((self._length, self[0], self[-1]) if self._length else 0)

    def __repr__(self) -> str:
        return f"BranchPath({len(self)} ids in {len(self._runs)} runs)"

    def position(self, entry_id: str) -> int | None:
        """Where ``entry_id`` sits on the chain (0 is the root), or ``None``."""
        at = self._position_of_id(entry_id)
        if at is None:
            return None
        for run, offset in zip(self._runs, self._offsets, strict=True):
            if at in run:
                return offset + at - run.start
        return None

    def _between(self, start: int, stop: int) -> BranchPath:
        runs: list[range] = []
        for run, offset in zip(self._runs, self._offsets, strict=True):
            low, high = max(start - offset, 0), min(stop - offset, len(run))
            if low < high:
                runs.append(run[low:high])
        return BranchPath(self._ids, self._position_of_id, runs)
