"""The bounds on what one archived window may cost Tree (configurable as ``[modes.tree]``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Hard bounds on what one archive may cost.

    :param max_depth: entries from the archived leaf to the branch base; a longer path is
        not verified, so the archive is unavailable. Verification reads the path from the
        store's parent index (C-level list operations, no entry decoded), so the default
        exceeds any session a process can hold: the first rollover of a long Pi session
        switched to Tree archives its whole branch, and the coordinator refuses, before
        writing anything, a rollover whose archive would exceed this bound.
    :param max_items: archived entries normalized into history items per archive (the
        newest ones; each gives at most one item).
    :param max_bytes: bytes of the session file the archived lines read per archive span
        (the newest ones).
    """

    max_depth: int = 10_000_000
    max_items: int = 5_000
    max_bytes: int = 8_000_000


DEFAULT_LIMITS = ArchiveLimits()
