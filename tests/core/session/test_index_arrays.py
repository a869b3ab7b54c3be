from __future__ import annotations

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmodes.session.index_arrays import IndexRuns, consecutive


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


_RUNS = [range(3, 7), range(9, 10), range(3), range(20, 25)]


def test_index_runs_read_as_the_indexes_they_hold() -> None:
    flat = [index for run in _RUNS for index in run]
    runs = IndexRuns([*_RUNS[:2], range(5, 5), *_RUNS[2:]])
    assert (list(runs), len(runs)) == (flat, len(flat))
    assert [runs[position] for position in range(-len(flat), len(flat))] == flat * 2
    with pytest.raises(IndexError):
        runs[len(flat)]
    for start in range(-2, len(flat) + 2):
        for stop in range(-2, len(flat) + 2):
            assert list(runs[start:stop]) == flat[start:stop]
            assert list(runs[start:stop:2]) == flat[start:stop:2]


def test_a_slice_of_index_runs_is_runs_again() -> None:
    runs = IndexRuns(_RUNS)
    assert isinstance(runs[2:6], IndexRuns)
    assert runs.between(2, 6).runs == [range(5, 7), range(9, 10), range(1)]
    assert runs.between(0, len(runs)).runs == _RUNS
    assert IndexRuns([]).runs == []
    assert not IndexRuns([range(4, 4)])
