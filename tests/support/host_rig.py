"""Helpers of the host tests: a scripted model, an isolated plugin manager, a recorder."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxmodes import hookimpl
from ctxmodes.host.records import HostRecord
from ctxmodes.host.runtime import AgentHost
from ctxmodes.host.session import AgentSession
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.ui import HeadlessUI

BUILTIN_COMMANDS = "ctxmodes.host.builtin_commands"


class EchoTool:
    """Returns its ``text`` argument; ``on_run`` lets a test act from inside the tool."""

    name = "echo"
    label = "Echo"
    description = "Echo the text back."
    parameters: dict[str, Any] = {  # noqa: RUF012 - a plain schema, never mutated
        "type": "object",
        "properties": {"text": {"type": "string"}},
    }

    def __init__(self, on_run: Callable[[ToolContext], None] | None = None) -> None:
        self.on_run = on_run
        self.calls: list[dict[str, Any]] = []

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        self.calls.append(arguments)
        if self.on_run is not None:
            self.on_run(context)
        return ToolResult.text(str(arguments.get("text", "")))


class BlockingTool:
    """Blocks until the run is aborted (or 10 s pass); ``started`` is set once it runs."""

    name = "block"
    label = "Block"
    description = "Wait until aborted."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self) -> None:
        self.started = threading.Event()

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        self.started.set()
        if context.signal.wait(10):
            return ToolResult.error("Operation aborted")
        return ToolResult.text("not aborted")


class ToolsPlugin:
    def __init__(self, *tools: Any) -> None:
        self.tools = tools

    @hookimpl
    def ctx_register_tools(self, register: Callable[[Any], None], session: Any) -> None:
        for tool in self.tools:
            register(tool)


def text_response(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, **extra}


def tool_response(
    name: str, arguments: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments or {}}], **extra}


@dataclass
class Rig:
    host: AgentHost
    provider: ScriptedProvider
    ui: HeadlessUI
    records: list[HostRecord] = field(default_factory=list)

    @property
    def session(self) -> AgentSession:
        return self.host.session

    def types(self, *, updates: bool = False) -> list[str]:
        """Record types in order; streaming updates only with ``updates``."""
        streaming = ("message_update", "tool_execution_update")
        return [r.type for r in self.records if updates or r.type not in streaming]

    def of(self, kind: type) -> list[Any]:
        return [r for r in self.records if isinstance(r, kind)]

    def file_entries(self) -> list[dict[str, Any]]:
        """The session file's entries (header excluded), as stored; none before the file is
        written (at the session's first message)."""
        path = self.session.session_manager.session_file
        assert path is not None
        if not path.exists():
            return []
        lines = path.read_bytes().splitlines()
        return [orjson.loads(line) for line in lines[1:] if line]

    def messages_in_file(self) -> list[dict[str, Any]]:
        return [e["message"] for e in self.file_entries() if e["type"] == "message"]

    def clear(self) -> None:
        self.records.clear()


RigFactory = Callable[..., Rig]
