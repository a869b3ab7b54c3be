"""One model call's machinery, shared by every wire format.

:class:`CallContext` carries what a call needs besides the model and its inputs: the HTTP
seam, the abort signal, the event sink, the clock. :meth:`CallContext.run` owns the
lifecycle pi-ai gives every transport: the message starts empty with ``stopReason``
``pending``; ``start`` is emitted once the response is accepted; any failure keeps what
streamed so far and ends with ``stopReason`` ``error`` (or ``aborted`` when the signal
fired) and Pi's ``errorMessage``; exactly one ``done`` or ``error`` event ends the stream.
"""

from __future__ import annotations

import contextlib
import email.utils
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ctxmodes.abort import AbortSignal
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import HttpSeam, abortable
from ctxmodes.providers.jsvalues import dumps, js_length, pi_user_agent, stringify
from ctxmodes.providers.wire import (
    Emit,
    PiContext,
    WireError,
    WireEvent,
    new_output,
    strip_scratch,
    wall_clock_ms,
)

#: Tokens pi-ai always leaves free in the context window when it sizes ``maxTokens``.
CONTEXT_SAFETY_TOKENS = 4096
#: What a dropped connection reads as (Node's wording, which Pi stores).
TERMINATED = "terminated"
#: The SDK's wording for a read that timed out.
TIMED_OUT = "Request timed out."

RetryListener = Callable[[int, float, str], None]


def _ignore(_: WireEvent) -> None:
    return None


@dataclass
class CallContext:
    """Everything a call uses besides the model, context and options.

    :ivar on_retry: told ``(attempt, delay_ms, error text)`` before each transport-level
        retry, so a front end can show it as it happens.
    """

    seam: HttpSeam
    signal: AbortSignal
    emit: Emit = _ignore
    now_ms: Callable[[], int] = wall_clock_ms
    on_retry: RetryListener | None = None
    #: Set when the call failed on an answer that said how long to wait (``Retry-After``).
    retry_after_ms: float | None = None
    #: The HTTP status of the answer the call failed on, if it failed on one.
    failed_status: int | None = None
    _started: bool = field(default=False, repr=False)

    @property
    def user_agent(self) -> str:
        return self.seam.user_agent or pi_user_agent()

    def client(self, timeout_ms: int | None) -> httpx.Client:
        return self.seam.client(timeout_ms / 1000 if timeout_ms else None)

    def encode(self, body: dict[str, Any]) -> bytes:
        return dumps(body)

    def started(self) -> None:
        if not self._started:
            self._started = True
            self.emit(WireEvent("start"))

    def run(
        self, model: ModelSpec, api: str, body: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """Run ``body(output)`` under the lifecycle above; returns the final message."""
        output = new_output(model, api, self.now_ms())
        try:
            with abortable(self.signal):
                body(output)
        except WireError as error:
            self.retry_after_ms = _requested_wait(error)
            self.failed_status = _failed_status(error)
            return self._fail(output, str(error))
        except httpx.TimeoutException:
            return self._fail(output, TIMED_OUT)
        except httpx.HTTPError as error:
            return self._fail(output, str(error) or TERMINATED)
        strip_scratch(output)
        self.emit(WireEvent("done", reason=output["stopReason"]))
        return output

    def _fail(self, output: dict[str, Any], message: str) -> dict[str, Any]:
        strip_scratch(output)
        output["stopReason"] = "aborted" if self.signal.aborted else "error"
        output["errorMessage"] = message
        self.emit(WireEvent("error", reason=output["stopReason"]))
        return output

    def guard(self, events: Iterable[Any], signal: AbortSignal) -> Iterator[Any]:
        """``events``, ending quietly once ``signal`` aborts; transport failures mid-body
        become Pi's texts (``terminated``, the timeout message)."""
        iterator = iter(events)
        while not signal.aborted:
            try:
                event = next(iterator)
            except StopIteration:
                return
            except httpx.TimeoutException as error:
                if signal.aborted:
                    return
                raise WireError(TIMED_OUT) from error
            except httpx.TransportError as error:
                if signal.aborted:
                    return
                raise WireError(TERMINATED) from error
            yield event
            if signal.aborted:
                return


def server_wait_ms(headers: Mapping[str, str]) -> float | None:
    """The wait an answer asks for: ``retry-after-ms``, else ``retry-after`` (seconds or an
    HTTP date); ``None`` when it names none. ``headers`` has lower-case names."""
    if headers.get("retry-after-ms"):
        with contextlib.suppress(ValueError):
            return max(0.0, float(headers["retry-after-ms"]))
    value = headers.get("retry-after")
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value) * 1000)
    try:
        moment = email.utils.parsedate_to_datetime(value).timestamp() * 1000
    except (TypeError, ValueError):
        return None
    return max(0.0, moment - time.time() * 1000)


def _requested_wait(error: BaseException) -> float | None:
    # The status error is the failure itself or what caused it (the SDK-level retry's).
    seen: BaseException | None = error
    while seen is not None:
        headers = getattr(seen, "headers", None)
        if isinstance(headers, Mapping):
            return server_wait_ms(headers)
        seen = seen.__cause__
    return None


def _failed_status(error: BaseException) -> int | None:
    seen: BaseException | None = error
    while seen is not None:
        status = getattr(seen, "status", None)
        if isinstance(status, int):
            return status
        seen = seen.__cause__
    return None


def reasoning_effort(model: ModelSpec, level: str | None) -> str | None:
    """The thinking level to send: the session's level clamped to the model's, none if off."""
    if not level:
        return None
    clamped = model.clamp_thinking_level(level)
    return None if clamped == "off" else clamped


# ---------------------------------------------------------------- output budget


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return js_length(content)
    return sum(
        js_length(block.get("text", "")) if block.get("type") == "text" else 4800
        for block in content or ()
    )


def _message_tokens(message: dict[str, Any]) -> int:
    if message.get("role") in ("user", "toolResult"):
        return math.ceil(_content_chars(message.get("content")) / 4)
    chars = 0
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            chars += js_length(block.get("text", ""))
        elif kind == "thinking":
            chars += js_length(block.get("thinking", ""))
        else:
            chars += js_length(block.get("name", "")) + js_length(stringify(block.get("arguments")))
    return math.ceil(chars / 4)


def _usage_tokens(usage: dict[str, Any]) -> int:
    total: int = usage.get("totalTokens") or 0
    return total or (
        usage.get("input", 0)
        + usage.get("output", 0)
        + usage.get("cacheRead", 0)
        + usage.get("cacheWrite", 0)
    )


def estimate_context_tokens(context: PiContext) -> int:
    """pi-ai's ``estimateContextTokens``: the last usable usage plus chars/4 of what follows,
    else chars/4 of everything including system prompt and tools."""
    messages = context.messages
    last: int | None = None
    latest_prefix = -math.inf
    for index, message in enumerate(messages):
        if message.get("role") == "assistant":
            applies = message.get("timestamp", 0) >= latest_prefix
            if (
                applies
                and message.get("stopReason") not in ("aborted", "error")
                and _usage_tokens(message.get("usage") or {}) > 0
            ):
                last = index
        latest_prefix = max(latest_prefix, message.get("timestamp") or 0)
    if last is not None:
        tokens = _usage_tokens(messages[last]["usage"])
        tokens += sum(_message_tokens(message) for message in messages[last + 1 :])
        added = {
            name
            for message in messages[last + 1 :]
            if message.get("role") == "toolResult"
            for name in message.get("addedToolNames") or ()
        }
        added_tools = [tool for tool in context.tools if tool.get("name") in added]
        if added_tools:
            tokens += math.ceil(js_length(stringify(added_tools)) / 4)
        return tokens
    tokens = sum(_message_tokens(message) for message in messages)
    if context.system_prompt:
        tokens += math.ceil(js_length(context.system_prompt) / 4)
    if context.tools:
        tokens += math.ceil(js_length(stringify(context.tools)) / 4)
    return tokens


def clamp_max_tokens(model: ModelSpec, context: PiContext, requested: int | None) -> int:
    """pi-ai's ``maxTokens``: the request's or the model's, within the free context."""
    budget = requested if requested is not None else model.max_tokens
    if model.context_window <= 0:
        return max(1, budget)
    available = model.context_window - estimate_context_tokens(context) - CONTEXT_SAFETY_TOKENS
    return min(budget, max(1, available))
