"""Where a compaction cuts a branch: the first entry kept verbatim, and the turn it splits.

Walking back from the newest entry, entries are kept until their estimated tokens reach
``keep_recent_tokens``; the cut then moves forward to the nearest entry that may start the
kept part. A kept part may start at a user-side message or an assistant message, never at a
tool result (a result must follow its call). The cut is then pulled back over entries that
carry no message (labels, model and thinking changes, custom state ...), so that they stay
with the part they precede. A cut at an assistant message *splits a turn*: the turn's first
part is summarized on its own so the kept part still makes sense.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes.compaction._access import EntryLike, MessageLike, field
from ctxmodes.compaction._branch_view import BranchView

NO_TURN_START: Final = -1

_CUT_POINT_ROLES: Final = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES: Final = _CUT_POINT_ROLES - {"assistant"}


class CutPoint(BaseModel):
    """Result of :func:`find_cut_point` (indexes into the branch the search ran on)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    first_kept_entry_index: int = Field(alias="firstKeptEntryIndex")
    #: The entry starting the turn the cut splits, or ``NO_TURN_START`` (-1).
    turn_start_index: int = Field(alias="turnStartIndex")
    is_split_turn: bool = Field(alias="isSplitTurn")


def _has_role(messages: list[MessageLike], roles: frozenset[str]) -> bool:
    return any(field(message, "role") in roles for message in messages)


def _is_cut_point(view: BranchView, index: int) -> bool:
    return not view.is_compaction(index) and _has_role(view.messages(index), _CUT_POINT_ROLES)


def _is_turn_start(view: BranchView, index: int) -> bool:
    return not view.is_compaction(index) and _has_role(view.messages(index), _TURN_START_ROLES)


def turn_start_in(view: BranchView, entry_index: int, start_index: int) -> int:
    """:func:`find_turn_start_index` on a :class:`BranchView`."""
    for index in range(entry_index, start_index - 1, -1):
        if _is_turn_start(view, index):
            return index
    return NO_TURN_START


def find_turn_start_index(entries: Sequence[EntryLike], entry_index: int, start_index: int) -> int:
    """The nearest entry at or before ``entry_index`` (and not before ``start_index``) that
    starts a turn: a user, shell, custom or summary message. ``-1`` if there is none."""
    return turn_start_in(BranchView(entries), entry_index, start_index)


def _first_cut_point_from(view: BranchView, index: int, end_index: int) -> int | None:
    for candidate in range(index, end_index):
        if _is_cut_point(view, candidate):
            return candidate
    return None


def cut_point_in(
    view: BranchView, start_index: int, end_index: int, keep_recent_tokens: int
) -> CutPoint:
    """:func:`find_cut_point` on a :class:`BranchView`."""
    first = _first_cut_point_from(view, start_index, end_index)
    if first is None:
        return CutPoint(
            first_kept_entry_index=start_index, turn_start_index=NO_TURN_START, is_split_turn=False
        )
    cut = first
    accumulated = 0
    for index in range(end_index - 1, start_index - 1, -1):
        tokens = view.tokens(index)
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep_recent_tokens:
            # When only tool results follow, nothing qualifies and everything is kept.
            nearest = _first_cut_point_from(view, index, end_index)
            if nearest is not None:
                cut = nearest
            break
    while cut > start_index:
        previous = cut - 1
        if view.is_compaction(previous) or view.messages(previous):
            break
        cut = previous
    if _is_turn_start(view, cut):
        return CutPoint(
            first_kept_entry_index=cut, turn_start_index=NO_TURN_START, is_split_turn=False
        )
    turn_start = turn_start_in(view, cut, start_index)
    return CutPoint(
        first_kept_entry_index=cut,
        turn_start_index=turn_start,
        is_split_turn=turn_start != NO_TURN_START,
    )


def find_cut_point(
    entries: Sequence[EntryLike], start_index: int, end_index: int, keep_recent_tokens: int
) -> CutPoint:
    """Find the cut that keeps about ``keep_recent_tokens`` of ``entries[start:end]``.

    ``entries`` is a branch, root first. With no entry in range that may start the kept part,
    the cut is ``start_index`` (nothing can be summarized); when the recent entries never
    reach the budget, everything from the first possible cut is kept.
    """
    return cut_point_in(BranchView(entries), start_index, end_index, keep_recent_tokens)
