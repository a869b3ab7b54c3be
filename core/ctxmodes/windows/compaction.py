"""The fixed no-summary compaction a managed session writes instead of a Pi summary.

When Pi must compact (an overflow, a manual ``/compact`` in Local or Remote, or the one-time
trim after a ``new_context`` rollover), the mode supplies this compaction: a fixed summary
text saying that no summary was generated, the latest window boundary as the first kept
entry, and details that identify it::

    {"protocol": 1, "strategy": "codex-context-window", "windowId"?: <current window id>}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pydantic import Field, ValidationError

from ctxmodes.session.models import CompactionEntry
from ctxmodes.windows._wire import WireModel

NO_SUMMARY_COMPACTION_STRATEGY: Final = "codex-context-window"
NO_SUMMARY_COMPACTION_TEXT = (
    "[Pi Codex context-window boundary; no conversation summary was generated.]"
)


class NoSummaryCompactionDetails(WireModel):
    """``details`` of a no-summary compaction entry."""

    protocol: Literal[1]
    strategy: Literal["codex-context-window"]
    #: The window current when the compaction was written (absent before window 0 exists).
    window_id: str | None = Field(default=None, alias="windowId")


@dataclass(frozen=True, slots=True)
class NoSummaryCompaction:
    """What a mode answers to a compaction request: Pi appends it as the compaction entry."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: NoSummaryCompactionDetails


def no_summary_compaction(
    *,
    boundary_entry_id: str | None,
    default_first_kept_entry_id: str,
    tokens_before: int,
    window_id: str | None,
) -> NoSummaryCompaction:
    """The fixed compaction for a session whose latest window starts at ``boundary_entry_id``.

    :param default_first_kept_entry_id: Pi's own cut point, used when no boundary exists.
    :param window_id: the current window, recorded so the compaction can be matched to it.
    """
    return NoSummaryCompaction(
        summary=NO_SUMMARY_COMPACTION_TEXT,
        first_kept_entry_id=boundary_entry_id or default_first_kept_entry_id,
        tokens_before=tokens_before,
        details=NoSummaryCompactionDetails(
            protocol=1, strategy=NO_SUMMARY_COMPACTION_STRATEGY, window_id=window_id
        ),
    )


def parse_no_summary_details(details: object) -> NoSummaryCompactionDetails | None:
    """The no-summary details in ``details``, or ``None`` for any other compaction."""
    try:
        return NoSummaryCompactionDetails.model_validate(details)
    except ValidationError:
        return None


def is_no_summary_compaction(entry: CompactionEntry) -> bool:
    """True when ``entry`` is a no-summary compaction (whoever wrote it)."""
    return parse_no_summary_details(entry.details) is not None


def no_summary_window_id(entry: CompactionEntry) -> str | None:
    """The window a no-summary compaction was written in (``None`` if unknown or not one)."""
    details = parse_no_summary_details(entry.details)
    return details.window_id if details is not None else None
