"""Gemini's streamed chunks read into an assistant message (pi-ai 0.85's Google stream loop).

The body is read as ``@google/genai`` reads it: events end at a blank line (``\\n\\n``,
``\\r\\r`` or ``\\r\\n\\r\\n``), an event is one ``data:`` JSON object, and a body that ends
inside an event fails with the SDK's "Incomplete JSON segment at the end". ``thought: true``
parts form a thinking block, other text parts a text block; a function call arrives whole
(start, one delta, end) and gets an invented id when it has none; each chunk's
``usageMetadata`` replaces the usage.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import httpx
import orjson

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import stringify
from ctxmodes.providers.transport.usage import calculate_cost
from ctxmodes.providers.wire import Emit, JsonObject, PiMessage, WireError, WireEvent

DELIMITERS = ("\n\n", "\r\r", "\r\n\r\n")
DATA_PREFIX = "data:"
#: Invented tool-call ids end in a counter shared by every call of the process (as pi-ai's
#: module-level counter is), after the clock.
_CALL_COUNTER = itertools.count(1)


def chunks(response: httpx.Response) -> Iterator[JsonObject]:
    """The JSON chunks of the body.

    :raises WireError: an error object in the body, a chunk that is not JSON, or a body that
        ends inside an event.
    """
    buffer = ""
    for text in response.iter_text():
        _raise_error_chunk(text)
        buffer += text
        while True:
            found = [(buffer.find(mark), len(mark)) for mark in DELIMITERS]
            found = [(index, size) for index, size in found if index != -1]
            if not found:
                break
            index, size = min(found)
            event, buffer = buffer[:index].strip(), buffer[index + size :]
            if event.startswith(DATA_PREFIX):
                yield _parse(event[len(DATA_PREFIX) :].strip())
    if buffer.strip():
        raise WireError("Incomplete JSON segment at the end")


def _raise_error_chunk(text: str) -> None:
    """A read that is one JSON object with an ``error`` of an HTTP status fails the stream."""
    if "error" not in text:
        return
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return
    code = error.get("code")
    if isinstance(code, int | float) and 400 <= code < 600:
        raise WireError(f"got status: {error.get('status')}. {stringify(parsed)}")


def _parse(text: str) -> JsonObject:
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise WireError(f"exception parsing stream chunk {text}. invalid JSON ({error})") from error
    if not isinstance(parsed, dict):
        raise WireError(f"exception parsing stream chunk {text}. not an object")
    return parsed


def map_finish_reason(reason: str) -> str:
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    return "error"


def _count(metadata: JsonObject, key: str) -> int:
    """A token count (a missing or malformed one counts as none)."""
    value = metadata.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class GenerateStream:
    """Reads chunks into ``output`` and emits pi-ai's events; :meth:`finish` ends the open
    block."""

    def __init__(
        self, model: ModelSpec, output: PiMessage, emit: Emit, now_ms: Callable[[], int]
    ) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._now_ms = now_ms
        self._current: JsonObject | None = None

    def feed(self, chunk: JsonObject) -> None:
        output = self._output
        if not output.get("responseId") and chunk.get("responseId"):
            output["responseId"] = chunk["responseId"]
        candidates = chunk.get("candidates")
        candidate = candidates[0] if isinstance(candidates, list) and candidates else None
        if isinstance(candidate, dict):
            content = candidate.get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else ():
                if not isinstance(part, dict):
                    continue
                if "text" in part:
                    self._text(part)
                if part.get("functionCall"):
                    self._function_call(part)
            reason = candidate.get("finishReason")
            if reason and isinstance(reason, str):
                output["rawStopReason"] = reason
                output["stopReason"] = map_finish_reason(reason)
                calls = any(block["type"] == "toolCall" for block in output["content"])
                if calls and output["stopReason"] == "stop":
                    output["stopReason"] = "toolUse"
        metadata = chunk.get("usageMetadata")
        if metadata and isinstance(metadata, dict):
            cached = _count(metadata, "cachedContentTokenCount")
            thoughts = _count(metadata, "thoughtsTokenCount")
            output["usage"] = {
                "input": _count(metadata, "promptTokenCount") - cached,
                "output": _count(metadata, "candidatesTokenCount") + thoughts,
                "cacheRead": cached,
                "cacheWrite": 0,
                "reasoning": thoughts,
                "totalTokens": _count(metadata, "totalTokenCount"),
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            }
            calculate_cost(self._model, output["usage"])

    def _index(self) -> int:
        return len(self._output["content"]) - 1

    def _end_current(self) -> None:
        block = self._current
        if block is None:
            return
        if block["type"] == "text":
            self._emit(WireEvent("text_end", self._index(), content=block["text"]))
        else:
            self._emit(
                WireEvent(
                    "thinking_end", self._index(), content=block["thinking"], thinking=dict(block)
                )
            )

    def _text(self, part: JsonObject) -> None:
        thinking = part.get("thought") is True
        wanted = "thinking" if thinking else "text"
        if self._current is None or self._current["type"] != wanted:
            self._end_current()
            if thinking:
                self._current = {"type": "thinking", "thinking": ""}
                self._output["content"].append(self._current)
                self._emit(WireEvent("thinking_start", self._index()))
            else:
                self._current = {"type": "text", "text": ""}
                self._output["content"].append(self._current)
                self._emit(WireEvent("text_start", self._index()))
        block = self._current
        text = part["text"] if isinstance(part["text"], str) else ""
        signature = part.get("thoughtSignature")
        if thinking:
            block["thinking"] += text
            if isinstance(signature, str) and signature:
                block["thinkingSignature"] = signature
            self._emit(WireEvent("thinking_delta", self._index(), delta=text))
        else:
            block["text"] += text
            if isinstance(signature, str) and signature:
                block["textSignature"] = signature
            self._emit(WireEvent("text_delta", self._index(), delta=text))

    def _function_call(self, part: JsonObject) -> None:
        if self._current is not None:
            self._end_current()
            self._current = None
        call = part["functionCall"] if isinstance(part["functionCall"], dict) else {}
        name = call.get("name") or ""
        given = call.get("id")
        taken = any(
            block["type"] == "toolCall" and block["id"] == given
            for block in self._output["content"]
        )
        call_id = given if given and not taken else f"{name}_{self._now_ms()}_{next(_CALL_COUNTER)}"
        arguments = call.get("args")
        block: JsonObject = {
            "type": "toolCall",
            "id": call_id,
            "name": name,
            "arguments": arguments if arguments is not None else {},
        }
        if part.get("thoughtSignature"):
            block["thoughtSignature"] = part["thoughtSignature"]
        self._output["content"].append(block)
        index = self._index()
        self._emit(WireEvent("toolcall_start", index))
        self._emit(WireEvent("toolcall_delta", index, delta=stringify(block["arguments"])))
        self._emit(WireEvent("toolcall_end", index, tool_call=dict(block)))

    def finish(self) -> None:
        self._end_current()
