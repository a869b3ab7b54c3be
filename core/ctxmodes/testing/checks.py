"""Checks the conformance suites apply to what a mode produced: the requests the model was
sent and the session file. Each raises :class:`AssertionError` with a message that says
what is wrong, so a failing mode learns why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ctxmodes.providers.base import DeveloperMessage, ModelRequest
from ctxmodes.session.models import AssistantMessage, TextContent, ToolCall, ToolResultMessage

#: The opening tag of a window marker's block: at most one per request.
MARKER_OPENING = "<context_window>"


def check_tool_pairing(request: ModelRequest, number: int) -> None:
    """Every tool result in ``request`` follows the assistant message holding its call, and
    every call has its result: strict providers reject a request that breaks either."""
    pending: dict[str, str] = {}
    for position, message in enumerate(request.messages):
        if isinstance(message, AssistantMessage):
            if pending:
                raise AssertionError(_unanswered(number, pending))
            pending = {
                block.id: block.name for block in message.content if isinstance(block, ToolCall)
            }
        elif isinstance(message, ToolResultMessage):
            if pending.pop(message.tool_call_id, None) is None:
                where = "starts with" if position == 0 else "contains"
                raise AssertionError(
                    f"request {number} {where} a result of tool {message.tool_name!r} "
                    f"(call {message.tool_call_id}) whose call is not in the request: the "
                    "projection cut a call away from its result"
                )
        elif pending:
            raise AssertionError(_unanswered(number, pending))
    if pending:
        raise AssertionError(_unanswered(number, pending))


def _unanswered(number: int, pending: dict[str, str]) -> str:
    calls = ", ".join(f"{name!r} ({call_id})" for call_id, name in pending.items())
    return (
        f"request {number} holds a tool call without its result: {calls}; the projection "
        "cut the result away from its call"
    )


def _text(message: object) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


def check_single_marker(request: ModelRequest, number: int) -> None:
    """A request carries at most one window marker, and only as a developer message."""
    carrying = [m for m in request.messages if MARKER_OPENING in _text(m)]
    count = sum(_text(message).count(MARKER_OPENING) for message in carrying)
    if count > 1:
        raise AssertionError(
            f"request {number} carries {count} window markers; the model must see the "
            "current window's marker once"
        )
    for message in carrying:
        if not isinstance(message, DeveloperMessage):
            raise AssertionError(
                f"request {number} carries a window marker as a {message.role} message; "
                "markers reach the model in developer role only"
            )


class AppendOnlyWatch:
    """Snapshots of one session file; each must extend the one before."""

    def __init__(self, path: Path, flush: Callable[[], None]) -> None:
        self._path = path
        self._flush = flush
        self._before = b""

    def check(self, step: str) -> None:
        self._flush()
        after = self._path.read_bytes()
        if not after.startswith(self._before):
            raise AssertionError(
                f"the session file was rewritten during {step}: a mode may append to a "
                "session file, never change what is there"
            )
        self._before = after
