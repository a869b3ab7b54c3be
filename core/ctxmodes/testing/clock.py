"""One deterministic time line for a test session.

A host stamps messages with its clock, the scripted model stamps its answers, and the session
store stamps entries with its identity source. On the wall clock these readings can fall in
the same millisecond or not, depending on how loaded the machine is, and some of Pi's
decisions compare them (an answer no later than the latest compaction is ignored). A
:class:`SimulatedClock` feeds all three from one counter that advances on every reading, so
each reading is strictly later than the one before and a test's outcome never depends on
timing. Entry and session ids come from a seeded generator, so files are reproducible.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Container
from datetime import UTC, datetime, timedelta
from typing import Final

from ctxmodes.session.ids import IdentitySource, format_timestamp

__all__ = ["SimulatedClock"]

#: 2026-01-01T00:00:00.000Z
DEFAULT_START_MS: Final = 1_767_225_600_000
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class SimulatedClock:
    """Milliseconds that advance by ``step_ms`` per reading, and seeded ids.

    :param start_ms: the first reading, in milliseconds since the epoch.
    :param step_ms: how far each reading advances the clock; ``0`` freezes it, so every
        reading falls in one millisecond (what a very fast machine can do to the wall clock).
    :param seed: seeds the entry and session ids.
    """

    def __init__(
        self, start_ms: int = DEFAULT_START_MS, *, step_ms: int = 1, seed: int = 0
    ) -> None:
        if step_ms < 0:
            raise ValueError("step_ms must not be negative: time does not run backwards")
        self._next_ms = start_ms
        self._step_ms = step_ms
        self._random = random.Random(seed)
        # Hosts read the clock from worker threads too (tool batches).
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        """The next reading: later than every earlier one unless the clock is frozen."""
        with self._lock:
            reading = self._next_ms
            self._next_ms += self._step_ms
            return reading

    def timestamp(self) -> str:
        """The next reading in ``toISOString()`` form."""
        return format_timestamp(_EPOCH + timedelta(milliseconds=self.now_ms()))

    def entry_id(self, existing: Container[str]) -> str:
        """A seeded 8-hex-character id not in ``existing``."""
        with self._lock:
            while True:
                candidate = f"{self._random.getrandbits(32):08x}"
                if candidate not in existing:
                    return candidate

    def session_id(self) -> str:
        """A seeded UUIDv7 whose time field is the next reading."""
        ms = self.now_ms()
        with self._lock:
            random_bits = self._random.getrandbits(74)
        value = (ms << 80) | (0x7 << 76) | ((random_bits >> 62) << 64) | (0b10 << 62)
        value |= random_bits & ((1 << 62) - 1)
        return str(uuid.UUID(int=value))

    def identity(self) -> IdentitySource:
        """The identity source a session store takes its ids and timestamps from."""
        return IdentitySource(
            entry_id=self.entry_id, session_id=self.session_id, timestamp=self.timestamp
        )
