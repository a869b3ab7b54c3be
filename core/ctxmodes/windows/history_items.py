"""How session entries become history items.

One item per entry that carries conversation:

* a ``message`` entry: role from the message (``toolResult`` becomes ``tool``; other roles
  such as ``bashExecution`` are kept as they are; a role that is not a string, or a
  ``message`` that is not an object, becomes ``unknown``), content rendered as text (the
  JSON of a ``message`` that is not an object);
* a ``custom_message`` entry with string content: role ``developer``. Window markers are
  never items: they delimit windows instead.

Every other entry (custom entries, compactions, branch summaries, model changes, labels ...)
is skipped. The item id is the entry id, passed to the model unchanged.

Rendering: string content as is; block content one block per line (a block's ``text``, else
its ``thinking``, ``[image <mimeType>]``, a tool call as ``{"tool": name, "arguments": ...}``
JSON, anything else as its JSON); a message without content (``bashExecution``) as the JSON
of the whole message. The tool of an item is a string ``toolName`` or the first tool call;
a ``history``/``notes`` call routed through a flat router reports its action as the tool
name and the family as the namespace.

The rules read the entry as stored (:mod:`ctxmodes.windows.stored`), so rebuilding history
from a long branch decodes no model; :func:`item_fields` applies them to an entry model
through its stored form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ctxmodes.session import codec
from ctxmodes.session.models import CustomMessageEntry, MessageEntry, SessionEntry, UnknownEntry
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes.windows.stored import StoredEntry, stored_form
from ctxmodes.windows.tools import FAMILIES

_ROUTER_NAMES = frozenset(FAMILIES)


class ItemFields(NamedTuple):
    """An entry's item, before it is placed in a window (a named tuple: one is built per
    entry of every branch rebuilt, at a third of a frozen dataclass's cost)."""

    item_id: str
    role: str
    content: str
    tool_name: str | None = None
    tool_namespace: str | None = None


def stored_item(entry: StoredEntry) -> ItemFields | None:
    """The history item the stored entry contributes, or ``None`` when it contributes none."""
    entry_type = entry.get("type")
    if entry_type == "message":
        message = entry.get("message")
        item_id = entry.get("id")
        if not isinstance(item_id, str):
            return None
        if isinstance(message, dict):
            return _message_item(item_id, message)
        # Every message entry is an item, so an entry's type alone says whether it is one.
        return ItemFields(item_id, "unknown", _json(message))
    if entry_type == "custom_message":
        content = entry.get("content")
        item_id = entry.get("id")
        if (
            isinstance(content, str)
            and isinstance(item_id, str)
            and entry.get("customType") != CONTEXT_WINDOW_CUSTOM_TYPE
        ):
            return ItemFields(item_id, "developer", content)
    return None


def item_fields(entry: SessionEntry) -> ItemFields | None:
    """The history item of an entry model: :func:`stored_item` of its stored form."""
    # Other models cannot hold an item (an unknown entry may be a message or custom message
    # that fits no model), so they are not dumped.
    if isinstance(entry, MessageEntry | CustomMessageEntry | UnknownEntry):
        return stored_item(stored_form(entry))
    return None


def _message_item(item_id: str, message: Mapping[str, Any]) -> ItemFields:
    role = message.get("role")
    if not isinstance(role, str):
        role = "unknown"
    elif role == "toolResult":
        role = "tool"
    tool_name, tool_namespace = _tool_identity(message)
    return ItemFields(item_id, role, _render(message), tool_name, tool_namespace)


def _tool_identity(message: Mapping[str, Any]) -> tuple[str | None, str | None]:
    tool_name = message.get("toolName")
    if isinstance(tool_name, str):
        return tool_name, None
    content = message.get("content")
    if not isinstance(content, list):
        return None, None
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "toolCall"
            and isinstance(block.get("name"), str)
        ):
            namespace = block.get("namespace")
            arguments = block.get("arguments")
            return _call_identity(
                block["name"],
                namespace if isinstance(namespace, str) else None,
                arguments if isinstance(arguments, dict) else None,
            )
    return None, None


def _call_identity(
    name: str, namespace: str | None, arguments: Mapping[str, Any] | None
) -> tuple[str | None, str | None]:
    action = arguments.get("action") if arguments is not None else None
    if name in _ROUTER_NAMES and name == namespace and isinstance(action, str):
        return action, namespace
    return name, namespace or None


def _render(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return _json(message)
    return "\n".join([_render_block(block) for block in content])


def image_placeholder(mime_type: object) -> str:
    """What an item's content says where an image was: ``[image <mimeType>]``."""
    return f"[image {mime_type if isinstance(mime_type, str) else 'attachment'}]"


def _render_block(block: object) -> str:
    if not isinstance(block, dict):
        return _js_string(block)
    text = block.get("text")
    if isinstance(text, str):
        return text
    thinking = block.get("thinking")
    if isinstance(thinking, str):
        return thinking
    block_type = block.get("type")
    if block_type == "image":
        return image_placeholder(block.get("mimeType"))
    if block_type == "toolCall":
        # JSON.stringify leaves out keys whose value is undefined.
        call = {
            key: block[value]
            for key, value in (("tool", "name"), ("arguments", "arguments"))
            if value in block
        }
        return _json(call)
    return _json(block)


def _js_string(value: object) -> str:
    """``String(value)`` for the JSON scalars and arrays a malformed block can be."""
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "[object Object]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return codec.js_number(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ",".join("" if item is None else _js_string(item) for item in value)
    return str(value)


def _json(value: object) -> str:
    return codec.dumps(value).decode()
