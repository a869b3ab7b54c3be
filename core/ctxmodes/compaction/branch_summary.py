"""Summarizing the branch a tree navigation leaves (Pi's branch summarization, minus the call).

When the user moves to another point of the session tree, the entries between the old leaf
and the common ancestor of the old leaf and the target are the abandoned branch. Its newest
messages that fit the token budget are summarized; the summary entry that records it starts
with :data:`BRANCH_SUMMARY_PREAMBLE` and ends with the branch's file lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ctxmodes.compaction._access import (
    MISSING,
    EntryLike,
    EntryList,
    JsonObject,
    MessageLike,
    MessageList,
    as_json,
    field,
    js_truthy,
)
from ctxmodes.compaction.errors import MalformedMessageError
from ctxmodes.compaction.file_ops import FileOperations, FileOpsCollector
from ctxmodes.compaction.tokens import estimate_tokens
from ctxmodes.session.ids import timestamp_ms
from ctxmodes.session.models import AgentMessage, message_from_json

#: The summary stored when the branch holds no message worth summarizing.
NO_CONTENT_SUMMARY: Final = "No content to summarize"
#: Output cap of a branch-summary call (lowered further to the model's own output limit).
BRANCH_SUMMARY_MAX_TOKENS: Final = 4096
#: Context window assumed when the model does not state one.
DEFAULT_CONTEXT_WINDOW: Final = 128000
# Summaries of earlier summaries are worth overrunning the budget for, up to this share of it.
_SUMMARY_OVERRUN_SHARE: Final = 0.9


class BranchEntrySource(Protocol):
    """The part of a session manager the collection needs (``SessionManager`` has it)."""

    def get_branch_ids(self, from_id: str | None = None) -> list[str]:
        """Ids from the root to ``from_id``, root first (empty for an unknown id)."""
        ...

    def get_entry(self, entry_id: str) -> EntryLike | None:
        """The entry with this id, or ``None``."""
        ...


class BranchCollection(BaseModel):
    """The abandoned branch: entries oldest first, and where it forks from the target's path."""

    model_config = ConfigDict(frozen=True)

    #: The entries as the source holds them (models from a manager).
    entries: EntryList
    #: Deepest entry on both the old leaf's and the target's path (``None``: no shared entry).
    common_ancestor_id: str | None


class BranchPreparation(BaseModel):
    """The messages of a branch that fit the budget, newest kept, and all its file operations."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    messages: MessageList
    file_ops: FileOperations = Field(alias="fileOps")
    total_tokens: int = Field(alias="totalTokens")


class _EntryIndex:
    """:class:`BranchEntrySource` over a plain list of entries (a later duplicate id wins)."""

    def __init__(self, entries: Sequence[EntryLike]) -> None:
        self._by_id: dict[Any, EntryLike] = {field(entry, "id"): entry for entry in entries}

    def get_entry(self, entry_id: str) -> EntryLike | None:
        return self._by_id.get(entry_id)

    def get_branch_ids(self, from_id: str | None = None) -> list[str]:
        ids: list[str] = []
        seen: set[int] = set()
        current = self._by_id.get(from_id) if from_id else None
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            ids.append(field(current, "id"))
            parent = field(current, "parentId")
            current = self._by_id.get(parent) if parent else None
        ids.reverse()
        return ids


def collect_entries_for_branch_summary(
    source: BranchEntrySource | Sequence[EntryLike], old_leaf_id: str | None, target_id: str
) -> BranchCollection:
    """The entries a navigation from ``old_leaf_id`` to ``target_id`` leaves behind.

    Walks from the old leaf up to (not including) the common ancestor. Compactions on the way
    are included; their summaries then stand for what they replaced. ``source`` is a session
    manager or the session's entries.
    """
    if not old_leaf_id:
        return BranchCollection(entries=[], common_ancestor_id=None)
    lookup: BranchEntrySource = _EntryIndex(source) if isinstance(source, Sequence) else source
    on_old_path = set(lookup.get_branch_ids(old_leaf_id))
    common: str | None = None
    for entry_id in reversed(lookup.get_branch_ids(target_id)):
        if entry_id in on_old_path:
            common = entry_id
            break
    # Up the old path as the source resolved it (a parent cycle the store cut ends it).
    collected: list[EntryLike] = []
    for entry_id in reversed(lookup.get_branch_ids(old_leaf_id)):
        if entry_id == common:
            break
        entry = lookup.get_entry(entry_id)
        if entry is None:
            break
        collected.append(entry)
    collected.reverse()
    return BranchCollection(entries=collected, common_ancestor_id=common)


def _present(**fields: Any) -> JsonObject:
    return {key: value for key, value in fields.items() if value is not MISSING}


def _branch_message(entry: EntryLike) -> MessageLike | None:
    kind = field(entry, "type")
    if kind == "message":
        message = field(entry, "message")
        role = field(message, "role")
        if message is MISSING or message is None:
            raise MalformedMessageError("message entry without a message")
        # The tool call in the assistant message already says what the result was for.
        return None if role == "toolResult" else message
    if kind not in ("custom_message", "branch_summary", "compaction"):
        return None
    stored = as_json(entry)
    timestamp = timestamp_ms(stored.get("timestamp"))
    if kind == "custom_message":
        return _present(
            role="custom",
            customType=stored.get("customType", MISSING),
            content=stored.get("content", MISSING),
            display=stored.get("display", MISSING),
            details=stored.get("details", MISSING),
            timestamp=timestamp,
        )
    if kind == "branch_summary":
        return _present(
            role="branchSummary",
            summary=stored.get("summary", MISSING),
            fromId=stored.get("fromId", MISSING),
            timestamp=timestamp,
        )
    return _present(
        role="compactionSummary",
        summary=stored.get("summary", MISSING),
        tokensBefore=stored.get("tokensBefore", MISSING),
        timestamp=timestamp,
    )


def _as_model(message: MessageLike) -> AgentMessage:
    return message_from_json(message) if isinstance(message, dict) else message


def prepare_branch_entries(
    entries: Sequence[EntryLike],
    token_budget: int = 0,
    *,
    summaries: Sequence[EntryLike] | None = None,
) -> BranchPreparation:
    """Pick the newest messages of a branch that fit ``token_budget`` (0: no limit).

    Tool results are left out (the calls say enough). File operations come from every entry,
    including those over budget, and from the lists of earlier branch summaries we wrote.
    ``summaries`` (the ``branch_summary`` entries among ``entries``, in order) spares a pass
    over every entry when the caller can list them from an index: then only the newest
    entries, as far as the budget reaches, are read.

    :raises MalformedMessageError: for a message without the fields its estimate reads.
    """
    collector = FileOpsCollector()
    for entry in entries if summaries is None else summaries:
        if field(entry, "type") == "branch_summary" and not js_truthy(field(entry, "fromHook")):
            collector.add_details(field(entry, "details"))
    picked: list[MessageLike] = []
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        collector.add_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            is_summary = field(entry, "type") in ("compaction", "branch_summary")
            if is_summary and total < token_budget * _SUMMARY_OVERRUN_SHARE:
                picked.append(message)
                total += tokens
            break
        picked.append(message)
        total += tokens
    picked.reverse()
    return BranchPreparation(
        messages=[_as_model(message) for message in picked],
        file_ops=collector.result(),
        total_tokens=total,
    )


def branch_token_budget(context_window: int | None, reserve_tokens: int) -> int:
    """Tokens of branch content a summary request may carry."""
    return (context_window or DEFAULT_CONTEXT_WINDOW) - reserve_tokens
