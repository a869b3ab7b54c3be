"""Reading Mistral's streamed chunks into pi-ai's assistant message and events, as
pi-ai 0.85's ``consumeChatStream`` does: text and thinking blocks as they alternate (an
empty ``content`` string opens an empty text block), tool calls keyed by their index and
ended only after the stream, usage from any chunk that carries it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ctxmodes.providers.apis.mistral_conversations.request import derive_tool_call_id
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import parse_streaming_json, sanitize_surrogates, stringify
from ctxmodes.providers.transport.usage import calculate_cost
from ctxmodes.providers.wire import ArgumentBuffer, Emit, JsonObject, PiMessage, WireEvent

_STOP_REASONS = {
    "stop": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
}


#: Pi's event boundary: a blank line in any of the line-end spellings.
_BOUNDARY = re.compile(r"\r\n\r\n|\r\n\r|\r\n\n|\r\r\n|\n\r\n|\r\r|\n\r|\n\n")
_LINE_END = re.compile(r"\r\n|\r|\n")


def _data(raw: str) -> str:
    if raw.startswith("data:") and "\n" not in raw and "\r" not in raw:
        return raw[5:].strip()  # the usual event: one data line
    lines = [line[5:].lstrip() for line in _LINE_END.split(raw) if line.startswith("data:")]
    return "\n".join(lines).strip()


def event_batches(texts: Iterable[str]) -> Iterator[list[str]]:
    """The ``data`` of the events each piece of the body completes, read as Pi's Mistral
    reader reads them (its own reader, not an SSE library: events end at a blank line,
    ``data:`` lines joined, other fields ignored, an event cut off by the end of the stream
    still read); ends at ``[DONE]``. One list per piece, as Pi checks for an abort once per
    read, not per event."""
    buffer = ""
    for text in texts:
        buffer += text
        # The usual stream has "\n\n" as its only boundary: a plain split finds them.
        raws = buffer.split("\n\n") if "\r" not in buffer else _BOUNDARY.split(buffer)
        buffer = raws.pop()
        batch: list[str] = []
        for raw in raws:
            data = _data(raw)
            if data == "[DONE]":
                yield batch
                return
            if data:
                batch.append(data)
        yield batch
    if buffer.strip():
        data = _data(buffer)
        if data and data != "[DONE]":
            yield [data]


def stop_reason(reason: str) -> tuple[str, str | None]:
    mapped = _STOP_REASONS.get(reason)
    if mapped is not None:
        return mapped, None
    return "error", f"Provider stopped with: {reason}"


def _cached_tokens(usage: JsonObject, prompt_tokens: int) -> int:
    for outer, inner in (
        ("promptTokensDetails", "cachedTokens"),
        ("prompt_tokens_details", "cached_tokens"),
        ("promptTokenDetails", "cachedTokens"),
        ("prompt_token_details", "cached_tokens"),
    ):
        details = usage.get(outer)
        if isinstance(details, dict) and details.get(inner) is not None:
            raw = details[inner]
            break
    else:
        raw = usage.get("numCachedTokens", usage.get("num_cached_tokens", 0))
    cached = raw if isinstance(raw, int | float) and not isinstance(raw, bool) else 0
    return int(min(prompt_tokens, max(0, cached)))


class MistralStream:
    """Feeds parsed chunks into ``output``; :meth:`finish` ends the blocks after the stream."""

    def __init__(self, model: ModelSpec, output: PiMessage, emit: Emit) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._current: JsonObject | None = None
        self._tools: dict[Any, int] = {}

    def _index(self) -> int:
        return len(self._output["content"]) - 1

    def _end_current(self) -> None:
        block = self._current
        if block is None:
            return
        if block["type"] == "text":
            self._emit(WireEvent("text_end", self._index(), content=block["text"]))
        elif block["type"] == "thinking":
            self._emit(
                WireEvent(
                    "thinking_end", self._index(), content=block["thinking"], thinking=dict(block)
                )
            )

    def _open(self, kind: str) -> JsonObject:
        if self._current is None or self._current["type"] != kind:
            self._end_current()
            block: JsonObject = {"type": kind, kind: ""}
            self._output["content"].append(block)
            self._current = block
            self._emit(WireEvent(f"{kind}_start", self._index()))
        return self._current

    def _delta(self, kind: str, text: str) -> None:
        """``text`` added to the open block of ``kind`` (opened first if another is)."""
        block = self._current
        if block is None or block["type"] != kind:
            block = self._open(kind)
        block[kind] += text
        self._emit(WireEvent(f"{kind}_delta", len(self._output["content"]) - 1, delta=text))

    def feed(self, chunk: JsonObject) -> None:
        output = self._output
        if not output.get("responseId") and chunk.get("id"):
            output["responseId"] = chunk["id"]
        usage = chunk.get("usage")
        if usage:
            self._usage(usage)
        choices = chunk["choices"]
        if not choices:
            return
        choice = choices[0]
        if choice.get("finish_reason"):
            output["rawStopReason"] = choice["finish_reason"]
            output["stopReason"], message = stop_reason(choice["finish_reason"])
            if message:
                output["errorMessage"] = message
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if content is not None:
            if isinstance(content, str):
                self._delta("text", sanitize_surrogates(content))
            else:
                for item in content:
                    self._content(item)
        calls = delta.get("tool_calls")
        if calls:
            for call in calls:
                self._tool_call(call)

    def _content(self, item: Any) -> None:
        if isinstance(item, str):
            self._delta("text", sanitize_surrogates(item))
            return
        kind = item.get("type")
        if kind == "thinking":
            parts = item.get("thinking") or []
            if len(parts) == 1:  # the usual chunk: one part
                text = parts[0].get("text") or ""
            else:
                text = "".join(part.get("text") or "" for part in parts)
            thinking = sanitize_surrogates(text)
            if thinking:
                self._delta("thinking", thinking)
        elif kind == "text":
            self._delta("text", sanitize_surrogates(item.get("text") or ""))

    def _tool_call(self, call: JsonObject) -> None:
        if self._current is not None:
            self._end_current()
            self._current = None
        call_id = call.get("id")
        if not call_id or call_id == "null":
            call_id = derive_tool_call_id(f"toolcall:{call.get('index') or 0}", 0)
        key = call["index"] if call.get("index") is not None else call_id
        function = call.get("function") or {}
        at = self._tools.get(key)
        if at is None:
            block: JsonObject = {
                "type": "toolCall",
                "id": call_id,
                "name": function.get("name"),
                "arguments": {},
                "partialArgs": ArgumentBuffer(),
            }
            self._output["content"].append(block)
            at = self._tools[key] = self._index()
            self._emit(WireEvent("toolcall_start", at))
        arguments = function.get("arguments")
        piece = arguments if isinstance(arguments, str) else stringify(arguments or {})
        self._output["content"][at]["partialArgs"].append(piece)
        self._emit(WireEvent("toolcall_delta", at, delta=piece))

    def _usage(self, usage: JsonObject) -> None:
        totals = self._output["usage"]
        prompt = usage.get("prompt_tokens") or 0
        cached = _cached_tokens(usage, prompt)
        totals["input"] = max(0, prompt - cached)
        totals["output"] = usage.get("completion_tokens") or 0
        totals["cacheRead"] = cached
        totals["cacheWrite"] = 0
        totals["totalTokens"] = usage.get("total_tokens") or (
            totals["input"] + totals["output"] + totals["cacheRead"] + totals["cacheWrite"]
        )
        calculate_cost(self._model, totals)

    def finish(self) -> None:
        """The stream ended: the open block ends, then every tool call, in order."""
        self._end_current()
        for at in self._tools.values():
            block = self._output["content"][at]
            buffer = block.pop("partialArgs")
            block["arguments"] = parse_streaming_json(buffer.text())
            self._emit(WireEvent("toolcall_end", at, tool_call=dict(block)))
