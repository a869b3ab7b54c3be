"""Remote's ``history`` and ``notes`` tools: the flat routers of the shared contract, executed
by the backend with the call's abort signal."""

from __future__ import annotations

from typing import Any, Protocol

from ctxmodes.abort import AbortSignal
from ctxmodes.tools.base import ToolContext, ToolResult
from ctxmodes.windows.tools import Family, flat_router


class BackendCaller(Protocol):
    def call_backend(
        self, family: Family, arguments: dict[str, Any], signal: AbortSignal | None
    ) -> ToolResult:
        """Run one flat-router call on the backend."""


class RemoteRetrievalTool:
    """The ``history`` or ``notes`` router (``action`` picks the operation). The model sees
    Codex's namespaces instead; its namespaced calls are routed here."""

    def __init__(self, family: Family, caller: BackendCaller) -> None:
        self._schema = flat_router(family)
        self._family: Family = family
        self._caller = caller

    @property
    def name(self) -> str:
        return self._schema.name

    @property
    def label(self) -> str:
        return self._schema.name

    @property
    def description(self) -> str:
        return self._schema.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema.parameters

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        return self._caller.call_backend(self._family, arguments, context.signal)
