"""Anthropic's message events read into an assistant message, as pi-ai 0.85 reads them.

Pi parses the SSE itself: only the six message events count (``ping`` and unknown events are
skipped), an ``error`` event fails the call with its data line as the message, and a stream
that started a message but ends without ``message_stop`` fails even after a complete
``message_delta``. Blocks are text, thinking (also redacted) and tool use; server-side blocks
are dropped. Usage comes from ``message_start`` and is then replaced field by field by
``message_delta``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import httpx
import orjson

from ctxmodes.providers.apis.anthropic_messages.request import tool_name_from_claude_code
from ctxmodes.providers.catalog import ModelCost, ModelSpec
from ctxmodes.providers.jsvalues import parse_streaming_json, repair_json
from ctxmodes.providers.transport.sse import iter_events
from ctxmodes.providers.transport.usage import calculate_cost
from ctxmodes.providers.wire import (
    ArgumentBuffer,
    Emit,
    JsonObject,
    PiMessage,
    WireError,
    WireEvent,
)

MESSAGE_EVENTS = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
REDACTED_THINKING_TEXT = "[Reasoning redacted]"


def message_events(response: httpx.Response) -> Iterator[JsonObject]:
    """The message events of the body (pi-ai's ``iterateAnthropicEvents``).

    :raises WireError: an ``error`` event, an event that is not JSON, or no ``message_stop``
        after a ``message_start``.
    """
    started = stopped = False
    for sse in iter_events(response.iter_text(), dispatch_at_end=True):
        if sse.event == "error":
            raise WireError(sse.data)
        if sse.event not in MESSAGE_EVENTS:
            continue
        try:
            event = _parse(sse.data)
        except ValueError as error:
            raise WireError(
                f"Could not parse Anthropic SSE event {sse.event}: invalid JSON ({error}); "
                f"data={sse.data}"
            ) from error
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "message_start":
            started = True
        elif kind == "message_stop":
            stopped = True
        yield event
    if started and not stopped:
        raise WireError("Anthropic stream ended before message_stop")


def _parse(data: str) -> JsonObject:
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        parsed = orjson.loads(repair_json(data))
    if not isinstance(parsed, dict):
        raise ValueError("not an object")
    return parsed


def map_stop_reason(reason: str, details: object) -> tuple[str, str | None]:
    """Pi's stop reason (and error text) for Anthropic's ``stop_reason``.

    :raises WireError: a stop reason Pi does not know.
    """
    if reason in ("end_turn", "pause_turn", "stop_sequence"):
        return "stop", None
    if reason == "max_tokens":
        return "length", None
    if reason == "tool_use":
        return "toolUse", None
    if reason == "refusal":
        explanation = details.get("explanation") if isinstance(details, dict) else None
        return "error", explanation or "The model refused to complete the request"
    if reason == "sensitive":
        return "error", "Provider stopped with: sensitive"
    raise WireError(f"Unhandled stop reason: {reason}")


def _object(event: JsonObject, key: str) -> JsonObject:
    """A nested object of an event (a missing or malformed one is empty)."""
    value = event.get(key)
    return value if isinstance(value, dict) else {}


def _count(usage: JsonObject, key: str) -> int:
    """A token count (a missing or malformed one counts as none)."""
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(delta: JsonObject, key: str) -> str:
    value = delta.get(key)
    return value if isinstance(value, str) else ""


class MessagesStream:
    """Reads message events into ``output`` and emits pi-ai's events.

    :param oauth: tool names come back in Claude Code's casing and are mapped to the
        context's own.
    """

    def __init__(
        self,
        model: ModelSpec,
        output: PiMessage,
        emit: Emit,
        *,
        tools: Iterable[JsonObject] = (),
        oauth: bool = False,
    ) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._tools = list(tools)
        self._oauth = oauth
        self._usage_model = model
        #: Anthropic's block index → (the block, its position in ``content``).
        self._open: dict[object, tuple[JsonObject, int]] = {}

    def feed(self, event: JsonObject) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self._start(_object(event, "message"))
        elif kind == "content_block_start":
            self._block_start(event)
        elif kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_stop":
            self._block_stop(event)
        elif kind == "message_delta":
            self._message_delta(event)

    def _start(self, message: JsonObject) -> None:
        output = self._output
        # A field the server leaves out stays out (Pi's undefined), and the model stays the
        # requested one.
        if message.get("id") is not None:
            output["responseId"] = message["id"]
        if message.get("model") is not None:
            output["model"] = message["model"]
        if output["model"] != self._model.id:
            fallbacks = self._model.flag("allowedFallbackModels", None) or []
            cost = next(
                (
                    fallback.get("cost")
                    for fallback in fallbacks
                    if fallback.get("provider") == self._model.provider
                    and fallback.get("model") == output["model"]
                ),
                None,
            )
            if cost:
                self._usage_model = self._model.model_copy(
                    update={"id": output["model"], "cost": ModelCost.model_validate(cost)}
                )
        raw = _object(message, "usage")
        usage = output["usage"]
        usage["input"] = _count(raw, "input_tokens")
        usage["output"] = _count(raw, "output_tokens")
        usage["cacheRead"] = _count(raw, "cache_read_input_tokens")
        usage["cacheWrite"] = _count(raw, "cache_creation_input_tokens")
        usage["cacheWrite1h"] = _count(_object(raw, "cache_creation"), "ephemeral_1h_input_tokens")
        self._total()

    def _total(self) -> None:
        usage = self._output["usage"]
        usage["totalTokens"] = (
            usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
        )
        calculate_cost(self._usage_model, usage)

    def _add(self, index: object, block: JsonObject, event: str) -> None:
        content = self._output["content"]
        content.append(block)
        self._open[index] = (block, len(content) - 1)
        self._emit(WireEvent(event, len(content) - 1))

    def _block_start(self, event: JsonObject) -> None:
        block = _object(event, "content_block")
        kind = block.get("type")
        index = _block_key(event)
        if kind == "fallback":
            if self._output["content"]:
                raise WireError("Anthropic performed an unsupported mid-output model fallback")
        elif kind == "text":
            self._add(index, {"type": "text", "text": block.get("text") or ""}, "text_start")
        elif kind == "thinking":
            thinking = {
                "type": "thinking",
                "thinking": block.get("thinking") or "",
                "thinkingSignature": block.get("signature") or "",
            }
            self._add(index, thinking, "thinking_start")
        elif kind == "redacted_thinking":
            redacted = {
                "type": "thinking",
                "thinking": REDACTED_THINKING_TEXT,
                "thinkingSignature": block.get("data"),
                "redacted": True,
            }
            self._add(index, redacted, "thinking_start")
        elif kind == "tool_use":
            name = block.get("name")
            if self._oauth and isinstance(name, str):
                name = tool_name_from_claude_code(name, self._tools)
            arguments = block.get("input")
            call = {
                "type": "toolCall",
                "id": block.get("id"),
                "name": name,
                "arguments": arguments if arguments is not None else {},
                "partialJson": ArgumentBuffer(),
            }
            self._add(index, call, "toolcall_start")

    def _delta(self, event: JsonObject) -> None:
        found = self._open.get(_block_key(event))
        if found is None:
            return
        block, position = found
        delta = _object(event, "delta")
        kind = delta.get("type")
        # A delta without its text (a malformed event) adds nothing rather than failing.
        if kind == "text_delta" and block["type"] == "text":
            text = _text(delta, "text")
            block["text"] += text
            self._emit(WireEvent("text_delta", position, delta=text))
        elif kind == "thinking_delta" and block["type"] == "thinking":
            thinking = _text(delta, "thinking")
            block["thinking"] += thinking
            self._emit(WireEvent("thinking_delta", position, delta=thinking))
        elif kind == "input_json_delta" and block["type"] == "toolCall":
            piece = _text(delta, "partial_json")
            block["partialJson"].append(piece)
            self._emit(WireEvent("toolcall_delta", position, delta=piece))
        elif kind == "signature_delta" and block["type"] == "thinking":
            signature = _text(delta, "signature")
            block["thinkingSignature"] = (block.get("thinkingSignature") or "") + signature

    def _block_stop(self, event: JsonObject) -> None:
        found = self._open.pop(_block_key(event), None)
        if found is None:
            return
        block, position = found
        if block["type"] == "text":
            self._emit(WireEvent("text_end", position, content=block["text"]))
        elif block["type"] == "thinking":
            self._emit(
                WireEvent("thinking_end", position, content=block["thinking"], thinking=dict(block))
            )
        elif block["type"] == "toolCall":
            buffer = block.pop("partialJson")
            block["arguments"] = parse_streaming_json(buffer.text())
            self._emit(WireEvent("toolcall_end", position, tool_call=dict(block)))

    def _message_delta(self, event: JsonObject) -> None:
        output = self._output
        delta = _object(event, "delta")
        reason = delta.get("stop_reason")
        if reason:
            output["rawStopReason"] = reason
            stop, error = map_stop_reason(reason, delta.get("stop_details"))
            output["stopReason"] = stop
            if error:
                output["errorMessage"] = error
        raw = event.get("usage")
        if raw and isinstance(raw, dict):
            usage = output["usage"]
            for source, target in (
                ("input_tokens", "input"),
                ("output_tokens", "output"),
                ("cache_read_input_tokens", "cacheRead"),
                ("cache_creation_input_tokens", "cacheWrite"),
            ):
                if raw.get(source) is not None:
                    usage[target] = _count(raw, source)
            details = raw.get("output_tokens_details")
            if isinstance(details, dict) and details.get("thinking_tokens") is not None:
                usage["reasoning"] = _count(details, "thinking_tokens")
        self._total()


def _block_key(event: JsonObject) -> object:
    """The event's ``index`` as Pi matches blocks by it (``===``): a number, string or
    boolean equals itself (a boolean no number); an array or object, which a malformed event
    may carry, equals nothing, not even an equal one."""
    index = event.get("index")
    if isinstance(index, list | dict):
        return object()
    return (isinstance(index, bool), index)
