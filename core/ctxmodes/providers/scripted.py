"""The scripted model: replays responses from a JSON file, for tests and demos.

The file format is described in :mod:`ctxmodes.providers.script`. Every ``turn`` call
consumes the next response, in order. Summarization calls (``branch_summary``,
``compaction``) consume ``summaries`` when the key is present; without it they get a
deterministic digest of their input (see
:func:`~ctxmodes.providers._scripted_text.digest_summary`). Running out is a
:class:`ScriptExhaustedError` naming the call.

Messages come out shaped like Pi's: content in the order thinking, text, tool calls;
``stopReason`` ``toolUse`` when there are tool calls, else ``stop`` (unless the response
says otherwise); tool-call ids ``call_<call number>_<index>`` unless the script gives one;
usage estimated at four characters per token, overridable per response.

A tool call's string arguments may name a value the model was just shown: ``{{out:PATH}}``
is replaced by the value at ``PATH`` (keys and list indexes joined by dots, e.g.
``items.0.window_id``) in the newest tool result of the request whose text is a JSON object
or array. That is how a script passes back an opaque id a backend chose, as a model would.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from ctxmodes.abort import AbortSignal
from ctxmodes.providers._scripted_text import digest_summary, estimate_chars
from ctxmodes.providers.base import (
    ModelCapabilities,
    ModelInfo,
    ModelRequest,
    Provider,
    ProviderError,
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    UsageUpdate,
)
from ctxmodes.providers.script import (
    Script,
    ScriptedResponse,
    ScriptedToolCall,
    ScriptedUsage,
    ScriptError,
    load_script,
)
from ctxmodes.session.models import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)

PROVIDER = "scripted"
API = "scripted"
#: The error text of an aborted stream (pi-ai's wording).
ABORTED_MESSAGE = "Request was aborted"


class ScriptExhaustedError(ProviderError):
    """A call found no scripted response (or summary) left."""


def _wall_clock_ms() -> int:
    return int(time.time() * 1000)


class ScriptedProvider(Provider):
    """Replays a :class:`Script`; thread-safe, calls are numbered from 1 in arrival order.

    :param chunk_chars: the size of the streamed text and thinking deltas.
    :param clock: the time stamped on each answer, in milliseconds since the epoch (taken
        when the call starts); tests make it deterministic.
    """

    def __init__(
        self,
        script: Script,
        *,
        chunk_chars: int = 16,
        clock: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        self._script = script
        self._chunk_chars = max(1, chunk_chars)
        self._clock = clock
        self._lock = threading.Lock()
        self._calls = 0
        self._responses_used = 0
        self._summaries_used = 0
        self._info = ModelInfo(
            provider=PROVIDER,
            api=API,
            id=script.model,
            context_window=script.context_window,
            max_tokens=script.max_tokens,
            capabilities=ModelCapabilities(reasoning=script.reasoning),
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        return cls(load_script(path))

    @property
    def transport(self) -> str:
        return PROVIDER

    @property
    def info(self) -> ModelInfo:
        return self._info

    @property
    def calls(self) -> int:
        """How many calls were made so far."""
        return self._calls

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        """Consume the next scripted step now; iterate to receive its events.

        :raises ScriptExhaustedError: nothing is left for this call.
        """
        timestamp = self._clock()
        number, step = self._next_step(request)
        return self._emit(request, signal, number, step, timestamp)

    def _next_step(self, request: ModelRequest) -> tuple[int, ScriptedResponse]:
        with self._lock:
            self._calls += 1
            number = self._calls
            if request.purpose == "turn":
                responses = self._script.responses
                if self._responses_used >= len(responses):
                    raise ScriptExhaustedError(
                        f"scripted model: call {number} (purpose turn) has no response left; "
                        f"the script has {len(responses)} response(s)"
                    )
                self._responses_used += 1
                return number, responses[self._responses_used - 1]
            summaries = self._script.summaries
            if summaries is None:
                return number, ScriptedResponse(text=digest_summary(request))
            if self._summaries_used >= len(summaries):
                raise ScriptExhaustedError(
                    f"scripted model: call {number} (purpose {request.purpose}) has no summary "
                    f"left; the script has {len(summaries)} summary(ies)"
                )
            self._summaries_used += 1
            return number, ScriptedResponse(text=summaries[self._summaries_used - 1])

    def _emit(
        self,
        request: ModelRequest,
        signal: AbortSignal,
        number: int,
        step: ScriptedResponse,
        timestamp: int,
    ) -> Iterator[StreamEvent]:
        partial = _Partial()
        for kind, text in (("thinking", step.thinking), ("text", step.text)):
            if text is None:
                continue
            index: int | None = None
            for chunk in _chunks(text, self._chunk_chars):
                if signal.aborted:
                    yield self._aborted(partial, timestamp)
                    return
                # A block exists only once its first chunk arrived, as in a real stream.
                index = partial.start(kind) if index is None else index
                partial.extend(index, chunk)
                delta_type = ThinkingDelta if kind == "thinking" else TextDelta
                yield delta_type(content_index=index, delta=chunk)
            if kind == "thinking" and index is not None:
                yield ThinkingComplete(content_index=index, block=ThinkingContent(thinking=text))
        for position, scripted in enumerate(step.tool_calls):
            if signal.aborted:
                yield self._aborted(partial, timestamp)
                return
            call = _tool_call(scripted, f"call_{number}_{position}", request)
            yield ToolCallComplete(content_index=partial.add_tool_call(call), tool_call=call)
        if signal.aborted:
            yield self._aborted(partial, timestamp)
            return
        usage = _usage(estimate_chars(request), partial.output_chars(), step.usage)
        yield UsageUpdate(usage=usage)
        stop = step.stop_reason or ("toolUse" if step.tool_calls else "stop")
        message = self._message(partial, usage, stop, timestamp, step.error_message)
        if stop in ("error", "aborted"):
            yield StreamError(reason="error" if stop == "error" else "aborted", message=message)
        else:
            yield StreamDone(message=message)

    def _aborted(self, partial: _Partial, timestamp: int) -> StreamError:
        message = self._message(partial, _usage(0, 0, None), "aborted", timestamp, None)
        return StreamError(reason="aborted", message=message)

    def _message(
        self,
        partial: _Partial,
        usage: Usage,
        stop_reason: str,
        timestamp: int,
        error_message: str | None,
    ) -> AssistantMessage:
        if stop_reason == "aborted" and error_message is None:
            error_message = ABORTED_MESSAGE
        fields: dict[str, Any] = {
            "content": partial.blocks(),
            "api": self._info.api,
            "provider": self._info.provider,
            "model": self._info.id,
            "usage": usage,
            "stop_reason": stop_reason,
            "timestamp": timestamp,
        }
        if error_message is not None:
            fields["error_message"] = error_message
        return AssistantMessage(**fields)


class _Partial:
    """The content streamed so far, as text accumulators and finished tool calls."""

    def __init__(self) -> None:
        self._parts: list[tuple[str, list[str]] | ToolCall] = []

    def start(self, kind: str) -> int:
        self._parts.append((kind, []))
        return len(self._parts) - 1

    def extend(self, index: int, chunk: str) -> None:
        part = self._parts[index]
        assert isinstance(part, tuple)
        part[1].append(chunk)

    def add_tool_call(self, call: ToolCall) -> int:
        self._parts.append(call)
        return len(self._parts) - 1

    def blocks(self) -> list[ThinkingContent | TextContent | ToolCall]:
        blocks: list[ThinkingContent | TextContent | ToolCall] = []
        for part in self._parts:
            if isinstance(part, ToolCall):
                blocks.append(part)
            elif part[0] == "thinking":
                blocks.append(ThinkingContent(thinking="".join(part[1])))
            else:
                blocks.append(TextContent(text="".join(part[1])))
        return blocks

    def output_chars(self) -> int:
        total = 0
        for part in self._parts:
            if isinstance(part, ToolCall):
                total += len(part.name) + len(orjson.dumps(part.arguments))
            else:
                total += sum(len(chunk) for chunk in part[1])
        return total


_OUTPUT_REFERENCE = re.compile(r"\{\{out:([^}]+)\}\}")


def _newest_json_output(request: ModelRequest) -> object:
    for message in reversed(request.messages):
        if not isinstance(message, ToolResultMessage):
            continue
        text = "".join(block.text for block in message.content if isinstance(block, TextContent))
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict | list):
            return value
    return None


def _output_value(output: object, path: str) -> object:
    value = output
    for key in path.split("."):
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            raise ScriptError(
                f"scripted model: {{{{out:{path}}}}} names nothing in the newest JSON tool output"
            )
    return value


def _fill_references(value: object, request: ModelRequest) -> object:
    if isinstance(value, dict):
        return {key: _fill_references(item, request) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill_references(item, request) for item in value]
    if not isinstance(value, str) or "{{out:" not in value:
        return value
    output = _newest_json_output(request)
    whole = _OUTPUT_REFERENCE.fullmatch(value)
    if whole is not None:
        return _output_value(output, whole.group(1))
    return _OUTPUT_REFERENCE.sub(lambda m: str(_output_value(output, m.group(1))), value)


def _tool_call(scripted: ScriptedToolCall, default_id: str, request: ModelRequest) -> ToolCall:
    # Only the fields Pi would write: an absent namespace must stay absent, not null.
    fields: dict[str, Any] = {
        "id": scripted.id or default_id,
        "name": scripted.name,
        "arguments": _fill_references(scripted.arguments, request),
    }
    if scripted.namespace is not None:
        fields["namespace"] = scripted.namespace
    return ToolCall(**fields)


def _chunks(text: str, size: int) -> Iterator[str]:
    if not text:
        yield ""
        return
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _usage(input_chars: int, output_chars: int, override: ScriptedUsage | None) -> Usage:
    values: dict[str, Any] = {
        "input": math.ceil(input_chars / 4),
        "output": math.ceil(output_chars / 4),
        "cache_read": 0,
        "cache_write": 0,
    }
    cost: dict[str, float] = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    total_tokens: int | None = None
    total_cost: float | None = None
    if override is not None:
        given = override.model_dump(exclude_none=True, exclude={"cost", "total_tokens"})
        values.update(given)
        total_tokens = override.total_tokens
        if override.cost is not None:
            cost.update(override.cost.model_dump(exclude_none=True, exclude={"total"}))
            total_cost = override.cost.total
    values["total_tokens"] = total_tokens if total_tokens is not None else sum(values.values())
    cost["total"] = total_cost if total_cost is not None else sum(cost.values())
    return Usage.model_validate({**values, "cost": cost})
