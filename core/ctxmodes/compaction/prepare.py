"""Everything a compaction needs to know before any summarization call (Pi's ``prepareCompaction``).

A compaction summarizes the part of the branch between the previous compaction's first kept
entry (the start of the branch if there was none) and the new cut point, and keeps the rest.
Starting at the previous *kept* part, not at the previous compaction entry, matters: those
kept messages were never summarized, so a repeat compaction must fold them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes.compaction._access import EntryLike, MessageLike, MessageList, field, js_truthy
from ctxmodes.compaction._branch_view import BranchView
from ctxmodes.compaction.cut_point import CutPoint, cut_point_in
from ctxmodes.compaction.file_ops import FileOperations, FileOpsCollector
from ctxmodes.compaction.settings import CompactionSettings
from ctxmodes.compaction.tokens import Number, estimate_context_tokens
from ctxmodes.session.models import AgentMessage, message_from_json

NO_COMPACTION: Final = -1


class CompactionBoundary(BaseModel):
    """Where the part of a branch that a new compaction may summarize begins."""

    model_config = ConfigDict(frozen=True)

    #: Index of the latest compaction entry on the branch, or ``NO_COMPACTION`` (-1).
    previous_compaction_index: int
    #: First index that may be summarized: the previous compaction's first kept entry (the
    #: entry after that compaction if its first kept entry is not on the branch), else 0.
    start_index: int


class CompactionPreparation(BaseModel):
    """What to summarize and what to keep; the input of the summarization step."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    #: Id of the first entry kept verbatim (may be a metadata entry such as a label).
    first_kept_entry_id: str = Field(alias="firstKeptEntryId")
    #: Messages summarized into the history part of the summary, oldest first.
    messages_to_summarize: MessageList = Field(alias="messagesToSummarize")
    #: When the cut splits a turn: the turn's messages before the cut, summarized separately.
    turn_prefix_messages: MessageList = Field(alias="turnPrefixMessages")
    is_split_turn: bool = Field(alias="isSplitTurn")
    #: Estimated context size before compacting.
    tokens_before: Number = Field(alias="tokensBefore")
    #: Summary of the previous compaction, which the new summary updates.
    previous_summary: str | None = Field(default=None, alias="previousSummary")
    file_ops: FileOperations = Field(alias="fileOps")
    settings: CompactionSettings


def _boundary_in(view: BranchView) -> CompactionBoundary:
    previous = NO_COMPACTION
    for index in range(len(view) - 1, -1, -1):
        if view.is_compaction(index):
            previous = index
            break
    if previous == NO_COMPACTION:
        return CompactionBoundary(previous_compaction_index=NO_COMPACTION, start_index=0)
    kept_id = field(view.entries[previous], "firstKeptEntryId")
    if kept_id is not None and not isinstance(kept_id, str):
        kept_id = None
    start = previous + 1
    if kept_id is not None:
        # Searching back from the compaction touches only the kept part, not the whole
        # branch (Pi searches from the root; the two differ only if an id repeats on it).
        for index in chain(range(previous - 1, -1, -1), range(previous + 1, len(view))):
            if field(view.entries[index], "id") == kept_id:
                start = index
                break
    return CompactionBoundary(previous_compaction_index=previous, start_index=start)


def find_compaction_boundary(path_entries: Sequence[EntryLike]) -> CompactionBoundary:
    """Locate the previous compaction on a branch and where the next one may start."""
    return _boundary_in(BranchView(path_entries))


def _context_messages(view: BranchView, boundary: CompactionBoundary) -> list[MessageLike]:
    """The branch's context (as the session builds it at the branch's last entry)."""
    previous = boundary.previous_compaction_index
    if previous == NO_COMPACTION:
        indexes: Sequence[int] = range(len(view))
    else:
        kept_from = boundary.start_index if boundary.start_index < previous else previous
        indexes = [previous, *range(kept_from, previous), *range(previous + 1, len(view))]
    return [message for index in indexes for message in view.messages(index)]


def _summarizable(view: BranchView, start: int, end: int) -> list[AgentMessage]:
    # One message per entry at most, and never an older compaction's summary: the previous
    # summary reaches the summarizer on its own, as ``previous_summary``.
    out: list[AgentMessage] = []
    for index in range(start, end):
        if view.is_compaction(index):
            continue
        messages = view.messages(index)
        if messages:
            first = messages[0]
            out.append(first if not isinstance(first, dict) else message_from_json(first))
    return out


def _file_ops(view: BranchView, previous: int, messages: Sequence[MessageLike]) -> FileOperations:
    collector = FileOpsCollector()
    if previous != NO_COMPACTION:
        entry = view.entries[previous]
        # Lists from a summary a plugin wrote mean nothing to us; only our own are carried.
        if not js_truthy(field(entry, "fromHook")):
            collector.add_details(field(entry, "details"))
    for message in messages:
        collector.add_message(message)
    return collector.result()


def prepare_compaction(
    path_entries: Sequence[EntryLike], settings: CompactionSettings
) -> CompactionPreparation | None:
    """Decide what a compaction of ``path_entries`` (a branch, root first) would summarize.

    Returns ``None`` when there is nothing to do: the branch ends with a compaction, it is
    empty, or nothing before the cut point is left to summarize.
    """
    view = BranchView(path_entries)
    if not len(view) or view.is_compaction(len(view) - 1):
        return None
    boundary = _boundary_in(view)
    tokens_before = estimate_context_tokens(_context_messages(view, boundary)).tokens
    cut: CutPoint = cut_point_in(view, boundary.start_index, len(view), settings.keep_recent_tokens)
    first_kept_id = field(path_entries[cut.first_kept_entry_index], "id")
    if not isinstance(first_kept_id, str) or not first_kept_id:
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _summarizable(view, boundary.start_index, history_end)
    turn_prefix: list[AgentMessage] = []
    if cut.is_split_turn:
        turn_prefix = _summarizable(view, cut.turn_start_index, cut.first_kept_entry_index)
    if not to_summarize and not turn_prefix:
        return None
    previous_summary = None
    if boundary.previous_compaction_index != NO_COMPACTION:
        summary = field(path_entries[boundary.previous_compaction_index], "summary")
        previous_summary = summary if isinstance(summary, str) else None
    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=_file_ops(view, boundary.previous_compaction_index, [*to_summarize, *turn_prefix]),
        settings=settings,
    )
