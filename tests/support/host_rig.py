"""Helpers of the host tests: tools to call, scripted responses to answer with; the host
itself is a :class:`~ctxmodes.testing.harness.HostHarness` (the ``make_rig`` fixture)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ctxmodes import hookimpl
from ctxmodes.testing.harness import HostHarness
from ctxmodes.tools.base import ToolContext, ToolResult

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


#: ``make_rig(responses, ...)``, the host tests' fixture (see ``tests/core/host/conftest.py``).
RigFactory = Callable[..., HostHarness]
