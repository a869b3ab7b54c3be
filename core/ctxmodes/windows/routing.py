"""Routing namespaced ``history``/``notes`` calls to the flat routers, and back for replay.

A transport that offers the namespaced operations (see :mod:`ctxmodes.windows.tools`)
receives calls such as ``namespace="notes", name="write_file", arguments={path, text}``,
while the agent executes one flat tool per family. :func:`route_tool_call` rewrites such a
call to ``name="notes", arguments={"action": "write_file", path, text}`` and keeps the
``namespace``, which is what marks the call as routed. :func:`unroute_tool_call` undoes it
when the stored call is replayed to the provider; whether the replay carries the namespace
is the transport's decision. Calls to unknown operations, and flat-router calls (which have
no namespace), pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxmodes.session.models import AssistantMessage, ToolCall
from ctxmodes.windows.tools import FAMILIES, OPERATIONS, Family


def _family(name: str | None) -> Family | None:
    return name if name in FAMILIES else None


def route_tool_call(call: ToolCall) -> ToolCall:
    """The flat-router form of a namespaced context call (other calls unchanged).

    The operation named by the call wins over an ``action`` argument it may carry.
    """
    family = _family(call.namespace)
    if family is None or call.name not in OPERATIONS[family]:
        return call
    arguments: dict[str, object] = {"action": call.name}
    arguments.update((key, value) for key, value in call.arguments.items() if key != "action")
    return call.model_copy(update={"name": family, "arguments": arguments})


def is_routed(call: ToolCall) -> bool:
    """Whether ``call`` was produced by :func:`route_tool_call`."""
    family = _family(call.name)
    action = call.arguments.get("action")
    return (
        family is not None
        and call.namespace == family
        and isinstance(action, str)
        and action in OPERATIONS[family]
    )


def unroute_tool_call(call: ToolCall) -> ToolCall:
    """The namespaced form of a routed call, for replay (other calls unchanged)."""
    if not is_routed(call):
        return call
    arguments = {key: value for key, value in call.arguments.items() if key != "action"}
    return call.model_copy(update={"name": call.arguments["action"], "arguments": arguments})


def route_message(message: AssistantMessage) -> AssistantMessage:
    """``message`` with every namespaced context call routed."""
    return _rewrite_calls(message, route_tool_call)


def unroute_message(message: AssistantMessage) -> AssistantMessage:
    """``message`` with every routed context call restored for replay."""
    return _rewrite_calls(message, unroute_tool_call)


def _rewrite_calls(
    message: AssistantMessage, rewrite: Callable[[ToolCall], ToolCall]
) -> AssistantMessage:
    content = [
        rewrite(block) if isinstance(block, ToolCall) else block for block in message.content
    ]
    if all(new is old for new, old in zip(content, message.content, strict=True)):
        return message
    return message.model_copy(update={"content": content})
