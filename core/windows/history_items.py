"""How session entries become history items.

One item per entry that carries conversation:

* a ``message`` entry: role from the message (``toolResult`` becomes ``tool``; other roles
  such as ``bashExecution`` are kept as they are), content rendered as text;
* a ``custom_message`` entry with string content: role ``developer``. Window markers are
  never items: they delimit windows instead.

Every other entry (custom entries, compactions, branch summaries, model changes, labels ...)
is skipped. The item id is the entry id, passed to the model unchanged.

Rendering: string content as is; block content one block per line (text, thinking,
``[image <mime type>]``, a tool call as ``{"tool": name, "arguments": ...}`` JSON, anything
else as its JSON); a message without content (``bashExecution``) as the JSON of the whole
message. The tool of an item is a tool result's ``toolName`` or an assistant message's first
tool call; a ``history``/``notes`` call routed through a flat router reports its action as
the tool name and the family as the namespace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxmodes.session import codec
from ctxmodes.session.models import (
    AgentMessage,
    CustomMessageEntry,
    ImageContent,
    MessageEntry,
    SessionEntry,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UnknownContent,
    UnknownMessage,
    to_json,
)
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes.windows.tools import FAMILIES

_ROUTER_NAMES = frozenset(FAMILIES)


@dataclass(frozen=True, slots=True)
class ItemFields:
    """An entry's item, before it is placed in a window."""

    item_id: str
    role: str
    content: str
    tool_name: str | None = None
    tool_namespace: str | None = None


def item_fields(entry: SessionEntry) -> ItemFields | None:
    """The history item ``entry`` contributes, or ``None`` when it contributes none."""
    if isinstance(entry, MessageEntry):
        return _message_item(entry.id, entry.message)
    if isinstance(entry, CustomMessageEntry):
        if entry.custom_type == CONTEXT_WINDOW_CUSTOM_TYPE or not isinstance(entry.content, str):
            return None
        return ItemFields(entry.id, "developer", entry.content)
    return None


def _message_item(item_id: str, message: AgentMessage) -> ItemFields:
    # Unknown messages are rendered from their stored JSON; the typed path covers everything
    # Pi writes and avoids dumping every message.
    data = to_json(message) if isinstance(message, UnknownMessage) else None
    role = _role(message, data)
    tool_name, tool_namespace = _tool_identity(message, data)
    return ItemFields(item_id, role, _render(message, data), tool_name, tool_namespace)


def _role(message: AgentMessage, data: Mapping[str, Any] | None) -> str:
    role = data.get("role") if data is not None else message.role
    if not isinstance(role, str):
        return "unknown"
    return "tool" if role == "toolResult" else role


def _tool_identity(
    message: AgentMessage, data: Mapping[str, Any] | None
) -> tuple[str | None, str | None]:
    if data is not None:
        return _tool_identity_json(data)
    if isinstance(message, ToolResultMessage):
        return message.tool_name, None
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return None, None
    for block in content:
        if isinstance(block, ToolCall):
            return _call_identity(block.name, block.namespace, block.arguments)
    return None, None


def _tool_identity_json(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    if isinstance(data.get("toolName"), str):
        return data["toolName"], None
    content = data.get("content")
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


def _render(message: AgentMessage, data: Mapping[str, Any] | None) -> str:
    if data is not None:
        return _render_json(data)
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return _json(to_json(message))
    return "\n".join(_render_block(block) for block in content)


def _render_block(block: object) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ThinkingContent):
        return block.thinking
    if isinstance(block, ImageContent):
        return f"[image {block.mime_type}]"
    if isinstance(block, ToolCall):
        return _json({"tool": block.name, "arguments": block.arguments})
    return _render_json_block(to_json(block) if isinstance(block, UnknownContent) else block)


def _render_json(data: Mapping[str, Any]) -> str:
    content = data.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return _json(data)
    return "\n".join(_render_json_block(block) for block in content)


def _render_json_block(block: object) -> str:
    if not isinstance(block, dict):
        return _js_string(block)
    if isinstance(block.get("text"), str):
        return str(block["text"])
    if isinstance(block.get("thinking"), str):
        return str(block["thinking"])
    if block.get("type") == "image":
        mime_type = block.get("mimeType")
        return f"[image {mime_type if isinstance(mime_type, str) else 'attachment'}]"
    if block.get("type") == "toolCall":
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
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return codec.js_number(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ",".join("" if item is None else _js_string(item) for item in value)
    return str(value)


def _json(value: object) -> str:
    return codec.dumps(value).decode()
