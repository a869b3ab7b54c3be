"""The simulated clock that tests give hosts, models and session stores."""

from __future__ import annotations

import pytest

from ctxmodes.session.ids import timestamp_ms, validate_session_id
from ctxmodes.testing.clock import SimulatedClock


def test_every_reading_is_later_than_the_one_before_across_all_three_views() -> None:
    clock = SimulatedClock(start_ms=1_000, step_ms=1)
    identity = clock.identity()
    readings = [clock.now_ms(), timestamp_ms(identity.timestamp()), clock.now_ms()]
    assert readings == [1_000, 1_001, 1_002]


def test_timestamps_are_in_to_iso_string_form() -> None:
    clock = SimulatedClock()
    assert clock.timestamp() == "2026-01-01T00:00:00.000Z"
    assert clock.timestamp() == "2026-01-01T00:00:00.001Z"


def test_a_frozen_clock_repeats_one_millisecond() -> None:
    clock = SimulatedClock(start_ms=5, step_ms=0)
    assert {clock.now_ms() for _ in range(3)} == {5}
    with pytest.raises(ValueError, match="negative"):
        SimulatedClock(step_ms=-1)


def test_ids_are_seeded_and_avoid_the_ids_already_taken() -> None:
    first, second = SimulatedClock(seed=3), SimulatedClock(seed=3)
    ids = [first.entry_id(set()) for _ in range(5)]
    assert ids == [second.entry_id(set()) for _ in range(5)]
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids)
    taken = {SimulatedClock(seed=3).entry_id(set())}
    assert SimulatedClock(seed=3).entry_id(taken) not in taken


def test_session_ids_are_uuid_v7_stamped_with_the_clock() -> None:
    clock = SimulatedClock(start_ms=0x0123456789AB)
    session_id = clock.session_id()
    assert validate_session_id(session_id) == session_id
    assert session_id.startswith("01234567-89ab-7")
    assert session_id[19] in "89ab"
    same_seed = SimulatedClock(start_ms=0x0123456789AB).session_id()
    other_seed = SimulatedClock(start_ms=0x0123456789AB, seed=1).session_id()
    assert session_id == same_seed != other_seed
