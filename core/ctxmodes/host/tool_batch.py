"""Running the tool calls of one assistant message.

Calls run **sequentially, in the order the model wrote them**, on the host's thread: a call
sees the effects of the calls before it (a ``cd`` in one bash call, a file written by the
previous call), which is what a model writing several calls in one message expects. For each
call, in order:

``tool_execution_start`` → ``ctx_tool_call`` (may refuse it) → the tool runs (its partial
results are ``tool_execution_update`` records) → ``ctx_tool_result`` (may patch the result) →
the result's images are made to fit what models take, as Pi makes every tool's
(:func:`ctxmodes.tools.image_fit.fit_result_images`) → ``tool_execution_end`` → the
``toolResult`` message ends and is persisted.

After an abort the batch stops: the call that was running returns its own (aborted) result,
later calls get none (the next request fills them in, see :mod:`ctxmodes.host.shaping`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ctxmodes.abort import AbortSignal
from ctxmodes.events import ToolCallBlock, ToolCallEvent, ToolResultEvent
from ctxmodes.host import records
from ctxmodes.host.records import HostRecord
from ctxmodes.session.models import AgentMessage, TextContent, ToolCall, ToolResultMessage
from ctxmodes.tools.base import ABORTED_MESSAGE, Tool, ToolContext, ToolResult

BLOCKED_MESSAGE: Final = "Tool execution was blocked"


def not_found_message(name: str) -> str:
    return f"Tool {name} not found"


def truncated_call_message(name: str) -> str:
    return (
        f'Tool call "{name}" was not run: the response was cut off at the output token limit, '
        "so its arguments may be incomplete. Call it again with complete arguments."
    )


class BatchHost(Protocol):
    """What the batch needs from the session running it."""

    def find_tool(self, name: str) -> Tool | None: ...

    def check_tool_call(self, event: ToolCallEvent) -> ToolCallBlock | None:
        """``ctx_tool_call``; a failing implementation blocks the call with its message."""

    def patch_tool_result(self, event: ToolResultEvent) -> None:
        """``ctx_tool_result``."""

    def auto_resize_images(self) -> bool:
        """Whether tools' images are shrunk to what models take (Pi's ``images.autoResize``)."""

    def tool_context(
        self, signal: AbortSignal, on_update: Callable[[ToolResult], None]
    ) -> ToolContext: ...

    def emit(self, record: HostRecord) -> None: ...

    def end_message(self, message: AgentMessage) -> AgentMessage:
        """Finish a message: ``ctx_message_end``, persist, add to the run's context."""

    def now_ms(self) -> int: ...


@dataclass(frozen=True, slots=True)
class BatchResult:
    results: tuple[ToolResultMessage, ...]
    #: Every call asked to end the run after this batch.
    terminate: bool


def run_tool_calls(host: BatchHost, calls: Sequence[ToolCall], signal: AbortSignal) -> BatchResult:
    """Run ``calls`` one after the other (see the module docstring)."""
    results: list[ToolResultMessage] = []
    terminates: list[bool] = []
    for call in calls:
        host.emit(records.ToolExecutionStarted(call.id, call.name, call.arguments))
        outcome, terminate = _execute(host, call, signal)
        results.append(_finish(host, call, outcome))
        terminates.append(terminate)
        if signal.aborted:
            break
    return BatchResult(tuple(results), bool(terminates) and all(terminates))


def fail_truncated_calls(host: BatchHost, calls: Sequence[ToolCall]) -> BatchResult:
    """Answer every call of a response cut off by the output limit with an error: its
    arguments may be incomplete, so none of them is run."""
    results: list[ToolResultMessage] = []
    for call in calls:
        host.emit(records.ToolExecutionStarted(call.id, call.name, call.arguments))
        outcome = _error(host, call, truncated_call_message(call.name))
        results.append(_finish(host, call, outcome))
    return BatchResult(tuple(results), terminate=False)


def _execute(
    host: BatchHost, call: ToolCall, signal: AbortSignal
) -> tuple[ToolResultMessage, bool]:
    tool = host.find_tool(call.name)
    if tool is None:
        return _error(host, call, not_found_message(call.name)), False
    block = host.check_tool_call(ToolCallEvent(call.id, call.name, call.arguments))
    host.emit(records.ToolCallChecked(call.id, call.name, None if block is None else block.reason))
    if block is not None:
        return _error(host, call, block.reason or BLOCKED_MESSAGE), False
    if signal.aborted:
        return _error(host, call, ABORTED_MESSAGE), False

    def on_update(partial: ToolResult) -> None:
        host.emit(records.ToolExecutionUpdated(call.id, call.name, partial))

    try:
        result = tool.execute(call.id, call.arguments, host.tool_context(signal, on_update))
    except Exception as exc:  # a tool's bug must not end the run: the model gets the error
        return _error(host, call, str(exc) or type(exc).__name__), False
    message = _result_message(host, call, result.content, result.details, result.is_error)
    return message, result.terminate


def _finish(host: BatchHost, call: ToolCall, message: ToolResultMessage) -> ToolResultMessage:
    event = ToolResultEvent(call.id, call.name, call.arguments, message)
    host.patch_tool_result(event)
    message = _with_fitted_images(event.result, host.auto_resize_images())
    host.emit(records.ToolResultChecked(call.id, call.name, message))
    host.emit(records.ToolExecutionEnded(call.id, call.name, message, message.is_error))
    host.emit(records.MessageStarted(message.role, message))
    ended = host.end_message(message)
    return ended if isinstance(ended, ToolResultMessage) else message


def _with_fitted_images(message: ToolResultMessage, auto_resize: bool) -> ToolResultMessage:
    """``message`` with its images made to fit: an image too large for a provider would make
    it refuse every later request of the session, not only this one."""
    from ctxmodes.tools.image_fit import fit_result_images

    content = fit_result_images(message.content, auto_resize=auto_resize)
    return message if content is None else message.model_copy(update={"content": content})


def _error(host: BatchHost, call: ToolCall, text: str) -> ToolResultMessage:
    # Pi stores an empty details object on the results it makes up itself.
    return _result_message(host, call, [TextContent(text=text)], {}, True)


def _result_message(
    host: BatchHost, call: ToolCall, content: Sequence[Any], details: Any, is_error: bool
) -> ToolResultMessage:
    fields: dict[str, Any] = {
        "tool_call_id": call.id,
        "tool_name": call.name,
        "content": list(content),
        "is_error": is_error,
        "timestamp": host.now_ms(),
    }
    if details is not None:  # absent, not null, like an undefined field in Pi
        fields["details"] = details
    return ToolResultMessage(**fields)
