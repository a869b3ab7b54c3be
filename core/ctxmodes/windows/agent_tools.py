"""The model-facing context tools: ``new_context``, ``get_context_remaining``, ``history`` and
``notes``, as :class:`~ctxmodes.tools.base.Tool` objects.

A managed mode registers them (``ctx_register_tools``). ``new_context``, ``history`` and
``notes`` go through the hooks (``ctx_new_context``, ``ctx_retrieve``), so every plugin sees
each rollover request and each retrieval while the active mode answers;
``get_context_remaining`` asks the mode that registered it (a :class:`ContextToolBackend`).
Every mode offers the same names, schemas and result shapes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ctxmodes.events import (
    NewContextRequest,
    RetrievalRequest,
)
from ctxmodes.session.models import TextContent
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.windows.budget import ContextRemaining
from ctxmodes.windows.tools import (
    CONTEXT_MANAGEMENT_INACTIVE,
    GET_CONTEXT_REMAINING,
    NEW_CONTEXT,
    Family,
    FunctionTool,
    flat_router,
)

if TYPE_CHECKING:
    from ctxmodes.tools.base import Tool


#: The result text when no plugin answers a ``history`` or ``notes`` call.
RETRIEVAL_UNAVAILABLE = "{family}.{action} is not available in this mode"


class ContextToolBackend(Protocol):
    """What the context tools need from the mode that registered them."""

    def context_remaining(self) -> ContextRemaining:
        """The budget of the current window."""


class _ContextTool:
    """A tool whose schema comes from the shared contract."""

    def __init__(self, schema: FunctionTool, backend: ContextToolBackend) -> None:
        self._schema = schema
        self._backend = backend

    @property
    def name(self) -> str:
        return self._schema.name

    @property
    def label(self) -> str:
        return self._schema.name.replace("_", " ")

    @property
    def description(self) -> str:
        return self._schema.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema.parameters


class NewContextTool(_ContextTool):
    def __init__(self, backend: ContextToolBackend) -> None:
        super().__init__(NEW_CONTEXT, backend)

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        hooks = context.hooks
        outcome = (
            hooks.new_context(NewContextRequest(tool_call_id=call_id, signal=context.signal))
            if hooks
            else None
        )
        if outcome is None:
            return ToolResult.error(CONTEXT_MANAGEMENT_INACTIVE, details={"started": False})
        return ToolResult(
            content=[TextContent(text=outcome.message)],
            details=outcome.details,
            terminate=outcome.terminate,
        )


class ContextRemainingTool(_ContextTool):
    def __init__(self, backend: ContextToolBackend) -> None:
        super().__init__(GET_CONTEXT_REMAINING, backend)

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        remaining = self._backend.context_remaining()
        return ToolResult.text(remaining.text(), details=remaining.dump())


class RetrievalTool(_ContextTool):
    """The flat ``history`` or ``notes`` router: ``action`` picks the operation."""

    def __init__(self, family: Family, backend: ContextToolBackend) -> None:
        super().__init__(flat_router(family), backend)
        self._family: Family = family

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        action = arguments.get("action")
        request = RetrievalRequest(
            family=self._family,
            action=action if isinstance(action, str) else "",
            arguments=arguments,
            signal=context.signal,
        )
        hooks = context.hooks
        result = hooks.retrieve(request) if hooks else None
        if result is None:
            text = RETRIEVAL_UNAVAILABLE.format(family=self._family, action=request.action)
            return ToolResult.error(text)
        return ToolResult(
            content=[TextContent(text=result.text), *result.images],
            details=result.details or None,
            is_error=result.is_error,
        )


def context_tools(backend: ContextToolBackend) -> list[Tool]:
    """The four tools of the contract, served by ``backend``."""
    return [
        NewContextTool(backend),
        ContextRemainingTool(backend),
        RetrievalTool("history", backend),
        RetrievalTool("notes", backend),
    ]
