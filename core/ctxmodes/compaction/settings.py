"""Compaction and branch-summary settings, and the threshold test that triggers compaction.

Defaults and field names are those of Pi's ``settings.json`` (``compaction`` and
``branchSummary`` sections), so a user's Pi settings carry over unchanged. Configuration
validates them from here without loading the rest of the package, whose names load lazily.
"""

from __future__ import annotations

from pydantic import Field

from ctxmodes.pi_spelling import PiSpelledSettings

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000


class CompactionSettings(PiSpelledSettings):
    """When to compact and how much recent context a compaction keeps verbatim."""

    enabled: bool = True
    #: Tokens left free for the model's reply; compaction triggers once the context would
    #: eat into them. Also caps the summary length (80 % of it).
    reserve_tokens: int = Field(default=DEFAULT_RESERVE_TOKENS, ge=0, alias="reserveTokens")
    #: Roughly how many tokens of the most recent messages survive a compaction unchanged.
    keep_recent_tokens: int = Field(
        default=DEFAULT_KEEP_RECENT_TOKENS, ge=0, alias="keepRecentTokens"
    )


class BranchSummarySettings(PiSpelledSettings):
    """How much room a branch summary leaves when it fits the abandoned branch into a request."""

    reserve_tokens: int = Field(default=DEFAULT_RESERVE_TOKENS, ge=0, alias="reserveTokens")
    #: Navigate without asking whether to summarize the branch being left.
    skip_prompt: bool = Field(default=False, alias="skipPrompt")


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """True when compaction is enabled and the context no longer leaves ``reserve_tokens`` free."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens
