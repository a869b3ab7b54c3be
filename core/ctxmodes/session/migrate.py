"""In-memory migration of version 1 and 2 session files to version 3.

Pi migrates old files when it opens them and rewrites them on disk. ctxmodes applies the same
changes to its in-memory copy only; the file is never rewritten.

* v1 → v2: every entry gets an id and a ``parentId`` pointing at the previous entry, making a
  single chain; a compaction's ``firstKeptEntryIndex`` (an index into the parsed lines, the
  header being index 0) becomes ``firstKeptEntryId``.
* v2 → v3: messages with role ``hookMessage`` are renamed to ``custom``.

Pi assigns random ids during the v1 migration, so every open of the same file gives different
ids. ctxmodes derives them from the session id and the entry's position instead: they are
still 8 hex characters, but stable across opens, so an id printed by one command can be used
by the next.
"""

from __future__ import annotations

from typing import Any, Final

from ctxmodes.session.jsvalues import js_to_number

__all__ = [
    "CURRENT_VERSION",
    "migrate_v1_entries",
    "needs_migration",
    "rename_hook_message",
    "version_number",
]

CURRENT_VERSION: Final = 3


def version_number(header: dict[str, Any]) -> float:
    """The header's version as JavaScript compares it (absent or ``null`` means 1)."""
    value = header.get("version")
    return 1.0 if value is None else js_to_number(value)


def needs_migration(version: float) -> tuple[bool, bool]:
    """Which of the two migration steps Pi applies to a file of ``version``."""
    if version >= CURRENT_VERSION:
        return False, False
    return version < 2, version < 3


def _stable_id(session_id: str, position: int, taken: set[str]) -> str:
    # Imported here: only version 1 files need it, and every open imports this module.
    import hashlib

    counter = 0
    while True:
        seed = f"{session_id}\0{position}\0{counter}".encode()
        candidate = hashlib.blake2b(seed, digest_size=4).hexdigest()
        if candidate not in taken:
            return candidate
        counter += 1


def migrate_v1_entries(header: dict[str, Any], parsed: list[Any]) -> None:
    """Apply the v1 → v2 step in place.

    ``parsed`` holds every value Pi would have parsed from the file after the header, in file
    order; the header itself is index 0 of Pi's list, so ``parsed[i]`` is Pi's ``i + 1``.
    """
    header["version"] = 2
    session_id = header["id"]
    taken: set[str] = set()
    previous: str | None = None
    for position, entry in enumerate(parsed):
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        entry_id = _stable_id(session_id, position, taken)
        taken.add(entry_id)
        entry["id"] = entry_id
        entry["parentId"] = previous
        previous = entry_id
        if entry.get("type") == "compaction":
            _convert_first_kept_index(entry, header, parsed)


def _convert_first_kept_index(
    entry: dict[str, Any], header: dict[str, Any], parsed: list[Any]
) -> None:
    index = entry.get("firstKeptEntryIndex")
    if isinstance(index, bool) or not isinstance(index, int | float):
        return
    target: Any = None
    if index == 0:
        target = header
    elif 0 < index <= len(parsed) and float(index).is_integer():
        target = parsed[int(index) - 1]
    if isinstance(target, dict) and target.get("type") != "session":
        # Entries after the compaction have no id yet; Pi then stores ``undefined``, which
        # JSON drops.
        target_id = target.get("id")
        if target_id is None:
            entry.pop("firstKeptEntryId", None)
        else:
            entry["firstKeptEntryId"] = target_id
    del entry["firstKeptEntryIndex"]


def rename_hook_message(entry: dict[str, Any]) -> None:
    """Apply the v2 → v3 step to one entry in place."""
    if entry.get("type") != "message":
        return
    message = entry.get("message")
    if isinstance(message, dict) and message.get("role") == "hookMessage":
        message["role"] = "custom"
