"""New session records in the exact shape Pi writes them.

Key order matters for byte compatibility: every entry starts with ``type, id, parentId,
timestamp``, except ``custom`` and ``custom_message`` entries, which Pi writes with their
extension fields first. Optional fields whose value is ``None`` are left out, as
``JSON.stringify`` leaves out ``undefined``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.migrate import CURRENT_VERSION

__all__ = [
    "Stamp",
    "branch_summary",
    "compaction",
    "custom",
    "custom_message",
    "header",
    "json_of",
    "label",
    "message",
    "model_change",
    "session_info",
    "session_name",
    "thinking_level_change",
]

JsonObject = dict[str, Any]


class Stamp(NamedTuple):
    """Where a new entry goes: its id, its parent's id (``None`` for a root) and its time.

    A named tuple: one is made for every append, at a fraction of a frozen dataclass's cost.
    """

    id: str
    parent_id: str | None
    timestamp: str


def is_model(value: object) -> bool:
    """Whether ``value`` is a pydantic model, without importing pydantic: until something
    imported it, nothing can be one."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


def json_of(value: Any) -> Any:
    """Models become their stored JSON; anything else is taken to be JSON already."""
    if is_model(value):
        from ctxmodes.session.models import to_json

        return to_json(value)
    if isinstance(value, list | tuple):
        return [json_of(item) for item in value]
    return value


def header(
    cwd: str, session_id: str, timestamp: str, parent_session: str | None = None
) -> JsonObject:
    """A version 3 session header."""
    record: JsonObject = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id,
        "timestamp": timestamp,
        "cwd": cwd,
    }
    if parent_session is not None:
        record["parentSession"] = parent_session
    return record


def _entry(entry_type: str, stamp: Stamp, **fields: Any) -> JsonObject:
    record: JsonObject = {
        "type": entry_type,
        "id": stamp.id,
        "parentId": stamp.parent_id,
        "timestamp": stamp.timestamp,
    }
    _put(record, **fields)
    return record


def _put(record: JsonObject, **fields: Any) -> None:
    for key, value in fields.items():
        if value is not None:
            record[key] = json_of(value)


def message(stamp: Stamp, stored: JsonObject) -> JsonObject:
    # Built in one literal: this is the entry of every turn, and ``stored`` is JSON already.
    return {
        "type": "message",
        "id": stamp.id,
        "parentId": stamp.parent_id,
        "timestamp": stamp.timestamp,
        "message": stored,
    }


def thinking_level_change(stamp: Stamp, thinking_level: str) -> JsonObject:
    return _entry("thinking_level_change", stamp, thinkingLevel=thinking_level)


def model_change(stamp: Stamp, provider: str, model_id: str) -> JsonObject:
    return _entry("model_change", stamp, provider=provider, modelId=model_id)


def compaction(
    stamp: Stamp,
    summary: str,
    first_kept_entry_id: str,
    tokens_before: int,
    details: Any = None,
    from_hook: bool | None = None,
    usage: Any = None,
) -> JsonObject:
    return _entry(
        "compaction",
        stamp,
        summary=summary,
        firstKeptEntryId=first_kept_entry_id,
        tokensBefore=tokens_before,
        details=details,
        usage=usage,
        fromHook=from_hook,
    )


def branch_summary(
    stamp: Stamp,
    from_id: str,
    summary: str,
    details: Any = None,
    from_hook: bool | None = None,
    usage: Any = None,
) -> JsonObject:
    return _entry(
        "branch_summary",
        stamp,
        fromId=from_id,
        summary=summary,
        details=details,
        usage=usage,
        fromHook=from_hook,
    )


def _extension_first(record: JsonObject, stamp: Stamp) -> JsonObject:
    record.update(id=stamp.id, parentId=stamp.parent_id, timestamp=stamp.timestamp)
    return record


def custom(stamp: Stamp, custom_type: str, data: Any = None) -> JsonObject:
    record: JsonObject = {"type": "custom", "customType": custom_type}
    _put(record, data=data)
    return _extension_first(record, stamp)


def custom_message(
    stamp: Stamp,
    custom_type: str,
    content: str | Sequence[Any],
    display: bool,
    details: Any = None,
) -> JsonObject:
    record: JsonObject = {
        "type": "custom_message",
        "customType": custom_type,
        "content": content if isinstance(content, str) else json_of(list(content)),
        "display": display,
    }
    _put(record, details=details)
    return _extension_first(record, stamp)


def label(stamp: Stamp, target_id: str, label: Any) -> JsonObject:
    return _entry("label", stamp, targetId=target_id, label=label)


def session_info(stamp: Stamp, name: str) -> JsonObject:
    return _entry("session_info", stamp, name=session_name(name))


def session_name(name: str) -> str:
    """Pi's sanitising of session names: runs of CR/LF become one space, then trim."""
    parts: list[str] = []
    current: list[str] = []
    in_break = False
    for char in name:
        if char in "\r\n":
            if not in_break:
                parts.append("".join(current))
                current = []
            in_break = True
        else:
            current.append(char)
            in_break = False
    parts.append("".join(current))
    return js_trim(" ".join(parts))
