"""ConverseStream events into pi-ai's assistant message and events, as pi-ai 0.85 reads
them: text blocks start with their first delta (Bedrock sends no ``contentBlockStart`` for
text), ``reasoningContent`` deltas form thinking blocks (a signature, or redacted bytes kept
base64 in ``thinkingSignature``), tool input is JSON text streamed into the call, usage
comes with ``metadata``. Blocks are found by Bedrock's ``contentBlockIndex``."""

from __future__ import annotations

import base64
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import parse_streaming_json
from ctxmodes.providers.transport.usage import calculate_cost
from ctxmodes.providers.wire import (
    ArgumentBuffer,
    Emit,
    JsonObject,
    PiMessage,
    WireError,
    WireEvent,
)

REDACTED_PLACEHOLDER = "[Reasoning redacted]"
_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}


def stop_reason(reason: str | None) -> tuple[str, str | None]:
    mapped = _STOP.get(reason or "")
    if mapped is not None:
        return mapped, None
    return "error", (f"Provider stopped with: {reason}" if reason else None)


def finalize(block: JsonObject) -> None:
    """Drop a block's scratch fields; buffered redacted reasoning becomes its signature."""
    block.pop("index", None)
    buffer = block.pop("partialJson", None)
    if isinstance(buffer, ArgumentBuffer):
        block["arguments"] = parse_streaming_json(buffer.text())
    chunks = block.pop("redactedChunks", None)
    if chunks is not None:
        block["thinkingSignature"] = base64.b64encode(b"".join(chunks)).decode()


class ConverseStream:
    """Feeds ``(event type, payload)`` pairs into ``output``."""

    def __init__(self, model: ModelSpec, output: PiMessage, emit: Emit, started: Any) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._started = started

    def _find(self, index: Any) -> tuple[int, JsonObject | None]:
        for at, block in enumerate(self._output["content"]):
            if block.get("index") == index:
                return at, block
        return -1, None

    def feed(self, event_type: str, payload: JsonObject) -> None:
        if event_type == "messageStart":
            if payload.get("role") != "assistant":
                raise WireError(
                    "Unexpected assistant message start but got user message start instead"
                )
            self._started()
        elif event_type == "contentBlockStart":
            self._block_start(payload)
        elif event_type == "contentBlockDelta":
            self._block_delta(payload)
        elif event_type == "contentBlockStop":
            self._block_stop(payload)
        elif event_type == "messageStop":
            reason = payload.get("stopReason")
            self._output["rawStopReason"] = reason
            self._output["stopReason"], message = stop_reason(reason)
            if message:
                self._output["errorMessage"] = message
        elif event_type == "metadata":
            self._metadata(payload)

    def _block_start(self, payload: JsonObject) -> None:
        tool = (payload.get("start") or {}).get("toolUse")
        if not tool:
            return
        block: JsonObject = {
            "type": "toolCall",
            "id": tool.get("toolUseId") or "",
            "name": tool.get("name") or "",
            "arguments": {},
            "partialJson": ArgumentBuffer(),
            "index": payload.get("contentBlockIndex"),
        }
        self._output["content"].append(block)
        self._emit(WireEvent("toolcall_start", len(self._output["content"]) - 1))

    def _new(self, block: JsonObject, start: str) -> tuple[int, JsonObject]:
        self._output["content"].append(block)
        at = len(self._output["content"]) - 1
        self._emit(WireEvent(start, at))
        return at, block

    def _block_delta(self, payload: JsonObject) -> None:
        index = payload.get("contentBlockIndex")
        delta = payload.get("delta") or {}
        at, block = self._find(index)
        if "text" in delta:
            if block is None:
                at, block = self._new({"type": "text", "text": "", "index": index}, "text_start")
            if block["type"] == "text":
                block["text"] += delta["text"]
                self._emit(WireEvent("text_delta", at, delta=delta["text"]))
        elif delta.get("toolUse") is not None and block is not None and block["type"] == "toolCall":
            piece = delta["toolUse"].get("input") or ""
            block["partialJson"].append(piece)
            self._emit(WireEvent("toolcall_delta", at, delta=piece))
        elif delta.get("reasoningContent"):
            self._reasoning(index, at, block, delta["reasoningContent"])

    def _reasoning(
        self, index: Any, at: int, block: JsonObject | None, reasoning: JsonObject
    ) -> None:
        if block is None:
            thinking: JsonObject = {
                "type": "thinking",
                "thinking": "",
                "thinkingSignature": "",
                "index": index,
            }
            at, block = self._new(thinking, "thinking_start")
        if block["type"] != "thinking":
            return
        if reasoning.get("text"):
            block["thinking"] += reasoning["text"]
            self._emit(WireEvent("thinking_delta", at, delta=reasoning["text"]))
        if reasoning.get("signature") and not block.get("redacted"):
            block["thinkingSignature"] = (block.get("thinkingSignature") or "") + reasoning[
                "signature"
            ]
        redacted = reasoning.get("redactedContent")
        if redacted:
            if not block.get("redacted"):
                block["redacted"] = True
                block["thinkingSignature"] = ""
                block["thinking"] += REDACTED_PLACEHOLDER
                self._emit(WireEvent("thinking_delta", at, delta=REDACTED_PLACEHOLDER))
            block.setdefault("redactedChunks", []).append(base64.b64decode(redacted))

    def _block_stop(self, payload: JsonObject) -> None:
        at, block = self._find(payload.get("contentBlockIndex"))
        if block is None:
            return
        finalize(block)
        if block["type"] == "text":
            self._emit(WireEvent("text_end", at, content=block["text"]))
        elif block["type"] == "thinking":
            self._emit(
                WireEvent("thinking_end", at, content=block["thinking"], thinking=dict(block))
            )
        elif block["type"] == "toolCall":
            self._emit(WireEvent("toolcall_end", at, tool_call=dict(block)))

    def _metadata(self, payload: JsonObject) -> None:
        usage = payload.get("usage")
        if not usage:
            return
        totals = self._output["usage"]
        totals["input"] = usage.get("inputTokens") or 0
        totals["output"] = usage.get("outputTokens") or 0
        totals["cacheRead"] = usage.get("cacheReadInputTokens") or 0
        totals["cacheWrite"] = usage.get("cacheWriteInputTokens") or 0
        totals["totalTokens"] = usage.get("totalTokens") or totals["input"] + totals["output"]
        calculate_cost(self._model, totals)

    def finish(self) -> None:
        for block in self._output["content"]:
            finalize(block)
