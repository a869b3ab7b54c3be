"""A branch of entries with each entry's context messages and token cost, computed on demand.

The compaction functions look at most entries several times (is it a cut point, does it
start a turn, what does it cost) but usually only at the part of the branch after the
previous compaction. Computing per entry, once, on first use keeps their cost bounded by
the part they look at instead of the whole branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ctxmodes.compaction._access import EntryLike, JsonObject, MessageLike, as_json, field
from ctxmodes.compaction.tokens import estimate_tokens
from ctxmodes.session.context import entry_to_context_messages
from ctxmodes.session.models import MessageEntry, UnknownMessage, to_json

# Entry types that can contribute a message to the context; every other type contributes none.
_CONTEXT_TYPES: Final = frozenset({"message", "custom_message", "branch_summary", "compaction"})


def context_messages(entry: EntryLike) -> list[MessageLike]:
    """The messages an entry contributes to the context (Pi's projection of one entry)."""
    if isinstance(entry, MessageEntry):
        if not isinstance(entry.message, UnknownMessage):
            return [entry.message]
        # Dumping the entry would push the unknown message through the typed union.
        stored: JsonObject = {"type": "message", "message": to_json(entry.message)}
    elif field(entry, "type") not in _CONTEXT_TYPES:
        return []
    else:
        stored = as_json(entry)
    return list(entry_to_context_messages(stored))


class BranchView:
    """Read-only view of a branch (root first) with cached per-entry projections."""

    def __init__(self, entries: Sequence[EntryLike]) -> None:
        self.entries = entries
        self._messages: dict[int, list[MessageLike]] = {}
        self._tokens: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def type_of(self, index: int) -> Any:
        return field(self.entries[index], "type")

    def is_compaction(self, index: int) -> bool:
        return bool(self.type_of(index) == "compaction")

    def messages(self, index: int) -> list[MessageLike]:
        """The context messages of entry ``index``."""
        cached = self._messages.get(index)
        if cached is None:
            cached = self._messages[index] = context_messages(self.entries[index])
        return cached

    def tokens(self, index: int) -> int:
        """Estimated tokens of the context messages of entry ``index``."""
        cached = self._tokens.get(index)
        if cached is None:
            cached = self._tokens[index] = sum(estimate_tokens(m) for m in self.messages(index))
        return cached
