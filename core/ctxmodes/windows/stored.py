"""Session entries in their stored form: the JSON objects of the session file.

The context-window state is a replay of the branch, and it reads each entry the way Pi and
the TypeScript extension do: as the stored JSON object, validated by nobody. Reading that
form directly means a rebuild from a long branch decodes no model; an entry model is first
turned back into its stored form (:func:`stored_form`), so both inputs follow the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ctxmodes.session.models import SessionEntry

#: A session entry as stored (read-only: the session store shares it with every reader).
StoredEntry = Mapping[str, Any]


class StoredEntrySource(Protocol):
    """Entries by id, as stored; :class:`~ctxmodes.session.manager.SessionManager` is one."""

    def get_branch_ids(self, from_id: str | None = None) -> Sequence[str]:
        """Ids from the root to ``from_id`` (default: the leaf), decoding no entry."""
        ...

    def get_entry_json(self, entry_id: str) -> StoredEntry | None:
        """The stored entry with this id (the last one, if a file repeats an id)."""
        ...


def stored_form(entry: SessionEntry) -> dict[str, Any]:
    """The JSON object the session file holds for ``entry``.

    The same as :func:`ctxmodes.session.models.to_json`, except that pydantic's serializer
    warning for a message entry holding a message of no known shape (whose output is right)
    is not emitted.
    """
    return entry.model_dump(by_alias=True, exclude_unset=True, warnings=False)


def stored_entries(source: StoredEntrySource, entry_ids: Sequence[str]) -> list[StoredEntry]:
    """The stored entries of ``entry_ids``, in order (ids the source does not know are left
    out).

    Every entry on a branch is the one its id resolves to: parents are looked up by id, and a
    repeated id resolves to its last entry, in Pi as in the session store.
    """
    found = (source.get_entry_json(entry_id) for entry_id in entry_ids)
    return [entry for entry in found if entry is not None]


def stored_branch(source: StoredEntrySource, leaf_id: str | None = None) -> list[StoredEntry]:
    """The stored entries from the root to ``leaf_id`` (default: the leaf)."""
    return stored_entries(source, source.get_branch_ids(leaf_id))


def parent_id(entry: StoredEntry) -> str | None:
    """The entry's parent id; anything but a string means none (as the session store reads
    it)."""
    parent = entry.get("parentId")
    return parent if isinstance(parent, str) else None
