"""Recognising a Tree-owned branch summary among the messages sent to the model.

The host turns every non-empty ``branch_summary`` entry on the active path into a
``branchSummary`` message carrying ``fromId``, the summary text and the entry's timestamp in
epoch milliseconds; the entry id does not survive that conversion. A summary is hidden when
the triple ``(fromId, summary, timestamp)`` equals that of a summary a verified archive of the
active branch owns, so the id check happens on the archive side: only a summary whose id a
valid manifest names contributes a signature. Manual summaries and summaries written by other
plugins have no manifest and are never hidden.
"""

from __future__ import annotations

from typing import NamedTuple

from ctxmodes.session import BranchSummaryEntry, BranchSummaryMessage, timestamp_ms


class SummarySignature(NamedTuple):
    from_id: str
    summary: str
    #: ``None`` where the entry's timestamp does not parse (JavaScript's ``NaN``).
    timestamp_ms: int | float | None


def summary_signature(entry: BranchSummaryEntry) -> SummarySignature:
    """The signature of a persisted summary, computed as the host builds its message."""
    return SummarySignature(entry.from_id, entry.summary, timestamp_ms(entry.timestamp))


def message_signature(message: BranchSummaryMessage) -> SummarySignature:
    return SummarySignature(message.from_id, message.summary, message.timestamp)
