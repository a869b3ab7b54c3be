from __future__ import annotations

import random
from array import array

from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.session.index_arrays import consecutive, is_consecutive


@given(st.integers(min_value=0, max_value=2**62), st.integers(min_value=0, max_value=3000))
def test_consecutive_is_the_range(start: int, count: int) -> None:
    assert consecutive(start, start + count) == array("q", range(start, start + count))


def test_consecutive_across_byte_boundaries() -> None:
    # Where a higher byte column turns over, and a run of a million (an index's size).
    for start, stop in [(0, 0), (0, 65), (255, 70_000), (2**24 - 100, 2**24 + 5000)]:
        assert consecutive(start, stop) == array("q", range(start, stop)), (start, stop)
    for start in (2**32 - 10, 2**40 - 7, 2**56 - 3):
        assert consecutive(start, start + 300) == array("q", range(start, start + 300))
    assert consecutive(0, 1_000_003) == array("q", range(1_000_003))


def test_is_consecutive_only_for_one_ascending_run() -> None:
    assert is_consecutive(array("q", range(7, 9000)))
    assert is_consecutive(array("q", [5]))
    rng = random.Random(3)
    shuffled = list(range(100, 500))
    rng.shuffle(shuffled)
    not_runs = ([0, 2, 1, 3], shuffled, [*range(100), 101], [-1, 0, 1], [3, 2, 1])
    for indexes in not_runs:
        assert not is_consecutive(array("q", indexes)), indexes
