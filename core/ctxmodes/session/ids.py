"""Identifiers and timestamps as Pi generates and reads them.

* Entry ids: 8 lowercase hex characters, unique within a session; after 100 collisions a
  full UUID is used instead.
* Session ids: UUIDv7 (millisecond timestamp, then a randomly seeded counter that keeps ids
  generated in one process strictly increasing).
* Entry timestamps: ``Date.prototype.toISOString()`` form, ``2026-01-05T12:34:56.789Z``.
* :func:`timestamp_ms` reads such strings back the way ``new Date(text).getTime()`` does for
  the ISO forms ``Date`` is specified to accept.

A session store takes all three from an :class:`IdentitySource`; :data:`PI_IDENTITY`, the
default, generates them as above.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Container
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = [
    "PI_IDENTITY",
    "IdentitySource",
    "InvalidSessionIdError",
    "format_timestamp",
    "new_entry_id",
    "new_session_id",
    "now_timestamp",
    "timestamp_ms",
    "validate_session_id",
]

_ID_ATTEMPTS: Final = 100
_SESSION_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_MAX_SEQUENCE: Final = (1 << 41) - 1


class InvalidSessionIdError(ValueError):
    """A caller-chosen session id does not match Pi's rules."""


class _RandomHex:
    """Eight random hex digits at a time, from random bytes the operating system gives a page
    at a time: a system call for each entry id would cost more than the rest of an append's
    stamp. Safe across threads without a lock: a deque's ``popleft`` and ``extend`` are atomic.
    """

    _PAGE: Final = 4096

    def __init__(self) -> None:
        self._ready: deque[str] = deque()
        if hasattr(os, "register_at_fork"):
            # A forked child must not hand out the ids its parent is about to.
            os.register_at_fork(after_in_child=self._ready.clear)

    def __call__(self) -> str:
        try:
            return self._ready.popleft()
        except IndexError:
            digits = os.urandom(self._PAGE).hex()
            self._ready.extend(digits[start : start + 8] for start in range(0, len(digits), 8))
            return self._ready.popleft()


_random_hex: Final = _RandomHex()


def new_entry_id(existing: Container[str]) -> str:
    """Return an 8-hex-character id not in ``existing`` (a full UUID after 100 collisions)."""
    for _ in range(_ID_ATTEMPTS):
        candidate = _random_hex()
        if candidate not in existing:
            return candidate
    return str(uuid.uuid4())


class _UuidV7:
    """Pi's UUIDv7 generator: time-ordered, monotonic within the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._sequence: int | None = None

    def __call__(self) -> str:
        with self._lock:
            now_ms = max(time.time_ns() // 1_000_000, self._last_ms)
            self._last_ms = now_ms
            random_bytes = bytearray(os.urandom(16))
            if self._sequence is None:
                self._sequence = int.from_bytes(random_bytes[1:6], "big")
            else:
                if self._sequence == _MAX_SEQUENCE:
                    raise RuntimeError("UUIDv7 sequence exhausted")
                self._sequence += 1
            sequence = self._sequence
        random_bytes[0:6] = now_ms.to_bytes(6, "big")
        random_bytes[6] = 0x70 | ((sequence >> 37) & 0x0F)
        random_bytes[7] = (sequence >> 29) & 0xFF
        random_bytes[8] = 0x80 | ((sequence >> 23) & 0x3F)
        random_bytes[9] = (sequence >> 15) & 0xFF
        random_bytes[10] = (sequence >> 7) & 0xFF
        random_bytes[11] = ((sequence & 0x7F) << 1) | (random_bytes[11] & 0x01)
        return str(uuid.UUID(bytes=bytes(random_bytes)))


new_session_id: Final = _UuidV7()
"""Return a new UUIDv7 session id (lowercase, hyphenated)."""


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` if Pi accepts it as a custom session id, else raise."""
    if not _SESSION_ID_PATTERN.fullmatch(session_id):
        raise InvalidSessionIdError(
            "Session id must be non-empty, contain only alphanumeric characters, '-', '_', "
            "and '.', and start and end with an alphanumeric character"
        )
    return session_id


def format_timestamp(moment: datetime) -> str:
    """Format an aware datetime as ``toISOString()`` does (UTC, milliseconds, ``Z``)."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class _Clock:
    """``new Date().toISOString()``, formatting the date and time of day once a second.

    Every append is stamped, and most appends fall in the same second as the one before, so
    only the milliseconds change; that keeps the stamp well under a microsecond.
    """

    def __init__(self) -> None:
        # (second since the epoch, its text up to and including the decimal point)
        self._second: tuple[int, str] = (-1, "")

    def __call__(self) -> str:
        second, millis = divmod(time.time_ns() // 1_000_000, 1000)
        cached, prefix = self._second
        if second != cached:
            prefix = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(second))
            # One tuple, replaced whole: threads see a matching second and text.
            self._second = (second, prefix)
        return f"{prefix}{millis:03d}Z"


now_timestamp: Final = _Clock()
"""The current time as ``new Date().toISOString()``."""


@dataclass(frozen=True, slots=True)
class IdentitySource:
    """Where a session store gets the ids and times of the records it creates.

    The defaults generate them as Pi does; a caller that needs reproducible files (tests,
    demos) passes deterministic functions instead.

    :ivar entry_id: a new entry id, given the ids the session already holds (the result must
        not be one of them).
    :ivar session_id: a new session id (it must satisfy :func:`validate_session_id`).
    :ivar timestamp: the current time in ``toISOString()`` form, for headers and entries.
    """

    entry_id: Callable[[Container[str]], str] = new_entry_id
    session_id: Callable[[], str] = new_session_id
    timestamp: Callable[[], str] = now_timestamp


PI_IDENTITY: Final = IdentitySource()
"""Ids and timestamps generated as Pi generates them."""


# ``Date`` accepts the ISO form with optional parts: a date alone is UTC, a date-time without
# an offset is local time. V8 also accepts any number of fraction digits, an offset without
# a colon, and days 29-31 in any month (counting on into the next month).
_ISO_PATTERN: Final = re.compile(
    r"(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?"
    r"(?:T(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?P<zone>Z|[+-]\d{2}:?\d{2})?)?"
)
_MAX_TIME_MS: Final = 8_640_000_000_000_000
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp_ms(text: object) -> int | None:
    """``new Date(text).getTime()`` for ISO strings; ``None`` where JavaScript gives ``NaN``.

    Non-ISO strings (which JavaScript engines parse with implementation-specific rules) are
    treated as unparsable.
    """
    if not isinstance(text, str):
        return None
    match = _ISO_PATTERN.fullmatch(text)
    if match is None or match["year"] == "-000000":
        return None
    try:
        year = int(match["year"])
        month = int(match["month"] or 1)
        day = int(match["day"] or 1)
        hour = int(match["hour"] or 0)
        minute = int(match["minute"] or 0)
        second = int(match["second"] or 0)
        millis = int((match["fraction"] or "0")[:3].ljust(3, "0"))
        if not (1 <= month <= 12 and 1 <= day <= 31 and minute < 60 and second < 60):
            return None
        if hour > 24 or (hour == 24 and (minute or second or millis)):
            return None
        # Years outside datetime's range are valid in JavaScript; count days from 2000-01-01
        # in 400-year cycles to stay exact.
        cycles, year_in_cycle = divmod(year - 2000, 400)
        day_start = datetime(2000 + year_in_cycle, month, 1, tzinfo=UTC) + timedelta(days=day - 1)
        cycle_days = cycles * 146097
        ms = (
            ((day_start - _EPOCH).days + cycle_days) * 86_400_000
            + hour * 3_600_000
            + minute * 60_000
            + second * 1000
            + millis
        )
    except ValueError:
        return None
    zone = match["zone"]
    if zone is None and match["hour"] is not None:
        ms -= _local_offset_ms(ms)
    elif zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        ms -= sign * (int(zone[1:3]) * 3_600_000 + int(zone[-2:]) * 60_000)
    if abs(ms) > _MAX_TIME_MS:
        return None
    return ms


def _local_offset_ms(local_ms: int) -> int:
    try:
        moment = datetime.fromtimestamp(local_ms / 1000, UTC)
        offset = moment.astimezone().utcoffset()
    except (OverflowError, OSError, ValueError):
        return 0
    return int(offset.total_seconds() * 1000) if offset else 0
