"""The bounds on what one archived window may cost Tree (configurable as ``[modes.tree]``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Hard bounds on what one archive may cost.

    :param max_depth: entries walked from the archived leaf towards the branch base; a
        longer path cannot be verified, so the archive is unavailable.
    :param max_items: archived entries normalized into history items per archive (the
        newest ones; each gives at most one item).
    :param max_chars: characters of raw item content kept per archive (the newest ones).
    """

    max_depth: int = 50_000
    max_items: int = 5_000
    max_chars: int = 4_000_000


DEFAULT_LIMITS = ArchiveLimits()
