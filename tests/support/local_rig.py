"""Builders of scripted responses and readers of what a Local session persisted and sent."""

from __future__ import annotations

from typing import Any

from ctxmodes.providers.base import DeveloperMessage, ModelRequest
from ctxmodes.session.models import (
    CustomMessageEntry,
    MessageEntry,
    TextContent,
    ToolResultMessage,
)
from ctxmodes.testing.harness import HostHarness
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE


def call(name: str, namespace: str | None = None, **arguments: Any) -> dict[str, Any]:
    """A scripted response that calls one tool."""
    tool: dict[str, Any] = {"name": name, "arguments": arguments}
    if namespace is not None:
        tool["namespace"] = namespace
    return {"tool_calls": [tool]}


def text(value: str, **fields: Any) -> dict[str, Any]:
    """A scripted text response; ``fields`` adds e.g. ``usage`` or ``stop_reason``."""
    return {"text": value, **fields}


def used(tokens: int) -> dict[str, Any]:
    """A scripted ``usage`` whose context size is ``tokens``."""
    return {"usage": {"totalTokens": tokens}}


def markers(harness: HostHarness, kind: str | None = None) -> list[CustomMessageEntry]:
    """The window-marker entries (of ``kind`` when given), in file order."""
    found = []
    for entry in harness.custom_entries(CONTEXT_WINDOW_CUSTOM_TYPE):
        assert isinstance(entry, CustomMessageEntry)
        if kind is None or entry.details["contextManagement"]["kind"] == kind:
            found.append(entry)
    return found


def window_of(marker: CustomMessageEntry) -> dict[str, Any]:
    """The marker's ``contextManagement`` details."""
    details: dict[str, Any] = marker.details["contextManagement"]
    return details


def message_text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


def sent_text(request: ModelRequest) -> str:
    """Everything a request carries, as one searchable string."""
    return "\n".join(message.model_dump_json() for message in request.messages)


def developer_texts(request: ModelRequest) -> list[str]:
    return [m.text for m in request.messages if isinstance(m, DeveloperMessage)]


def tool_results(harness: HostHarness, tool_name: str | None = None) -> list[ToolResultMessage]:
    return [
        entry.message
        for entry in harness.entries()
        if isinstance(entry, MessageEntry)
        and isinstance(entry.message, ToolResultMessage)
        and (tool_name is None or entry.message.tool_name == tool_name)
    ]


def user_entries(harness: HostHarness) -> list[MessageEntry]:
    return [
        entry
        for entry in harness.entries()
        if isinstance(entry, MessageEntry) and entry.message.role == "user"
    ]


def record_kinds(harness: HostHarness, *kinds: str) -> list[str]:
    """The names of the host records of the given kinds, in order."""
    return [type(r).__name__ for r in harness.records if type(r).__name__ in kinds]


def file_bytes(harness: HostHarness) -> bytes:
    """The session file as written so far (nothing before the first message)."""
    harness.manager.flush()
    path = harness.manager.session_file
    assert path is not None
    return path.read_bytes() if path.exists() else b""
