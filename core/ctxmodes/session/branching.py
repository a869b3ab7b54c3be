"""Copying entries of one session into a new one (branched sessions and forks).

A branched session holds the path to one entry, as Pi's ``createBranchedSession`` builds it:
label entries are dropped from the path and the remaining entries re-chained (each one's
parent is the previous kept entry); a compaction whose ``firstKeptEntryId`` named a dropped
label keeps from the entry after it; then one new label entry per labelled entry of the path
is appended, with a fresh id and the original label time.

Entries whose stored JSON does not change are copied byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

from ctxmodes.session import codec
from ctxmodes.session.store import EntryTable

__all__ = ["Copy", "branched_copy", "copied_entries", "copied_lines", "whole_copy"]

JsonObject = dict[str, Any]
#: One entry to copy: its index in the source table and the fields to change.
Copy = tuple[int, JsonObject]


def whole_copy(table: EntryTable) -> list[Copy]:
    """Every entry, unchanged (a fork keeps the whole tree)."""
    return [(index, {}) for index in range(len(table))]


def branched_copy(
    table: EntryTable, path: Sequence[int], new_id: Callable[[Container[str]], str]
) -> tuple[list[Copy], list[JsonObject]]:
    """The kept entries of ``path`` with their changes, and the re-created label entries
    (their ids from ``new_id``, given the ids already taken)."""
    kept: list[Copy] = []
    replacement: dict[str, str] = {}
    pending_labels: list[str] = []
    parent_id: str | None = None
    ids = table.ids
    for index in path:
        entry_id = ids[index]
        entry_type = table.types[index]
        if entry_type == "label":
            pending_labels.append(entry_id)
            continue
        for label_id in pending_labels:
            replacement[label_id] = entry_id
        pending_labels.clear()
        changes: JsonObject = {}
        stored_parent = table.parent_ids[index]
        # A root must say so explicitly, as Pi's copy does; a missing key counts as a change.
        if stored_parent != parent_id or (
            parent_id is None and table.entry(index).get("parentId", ...) is not None
        ):
            changes["parentId"] = parent_id
        if entry_type == "compaction":
            first_kept = table.entry(index).get("firstKeptEntryId")
            if isinstance(first_kept, str) and first_kept in replacement:
                changes["firstKeptEntryId"] = replacement[first_kept]
        kept.append((index, changes))
        parent_id = entry_id
    return kept, _recreated_labels(table, kept, parent_id, new_id)


def _recreated_labels(
    table: EntryTable,
    kept: Sequence[Copy],
    parent_id: str | None,
    new_id: Callable[[Container[str]], str],
) -> list[JsonObject]:
    kept_ids = {table.ids[index] for index, _ in kept}
    taken = set(kept_ids)
    labels: list[JsonObject] = []
    for target_id, (label, label_timestamp) in table.labels.items():
        if target_id not in kept_ids:
            continue
        label_id = new_id(taken)
        taken.add(label_id)
        entry: JsonObject = {"type": "label", "id": label_id, "parentId": parent_id}
        if label_timestamp is not None:
            entry["timestamp"] = label_timestamp
        entry["targetId"] = target_id
        entry["label"] = label
        labels.append(entry)
        parent_id = label_id
    return labels


def copied_entries(table: EntryTable, copies: Sequence[Copy]) -> list[JsonObject]:
    """The copied entries as JSON objects."""
    entries = table.entries([index for index, _ in copies])
    # Spreading keeps every existing key in place, as JavaScript's {...entry, parentId} does.
    return [{**entry, **changes} for entry, (_, changes) in zip(entries, copies, strict=True)]


def copied_lines(table: EntryTable, copies: Sequence[Copy]) -> list[bytes]:
    """File lines for the copies: the stored bytes when unchanged, else re-encoded."""
    stored = table.stored_lines([index for index, _ in copies])
    lines: list[bytes] = []
    for (index, changes), line in zip(copies, stored, strict=True):
        if line is not None and not changes:
            lines.append(line + b"\n")
        else:
            lines.append(codec.dumps_line({**table.entry(index), **changes}))
    return lines
