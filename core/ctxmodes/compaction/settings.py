"""Compaction and branch-summary settings (kept in :mod:`ctxmodes.compaction_settings`)."""

from __future__ import annotations

from ctxmodes.compaction_settings import (
    DEFAULT_KEEP_RECENT_TOKENS,
    DEFAULT_RESERVE_TOKENS,
    BranchSummarySettings,
    CompactionSettings,
    should_compact,
)

__all__ = [
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_RESERVE_TOKENS",
    "BranchSummarySettings",
    "CompactionSettings",
    "should_compact",
]
