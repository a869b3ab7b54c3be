"""Chat Completions chunks read into an assistant message (pi-ai 0.85's stream loop).

Pi's shapes are kept exactly, with one deliberate difference: a ``delta.content`` that is an
array of typed parts (Mistral's thinking parts) is read as the text of its parts, where Pi
appends the array itself to a string and stores ``[object Object]``.
"""

from __future__ import annotations

from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import parse_streaming_json, stringify
from ctxmodes.providers.transport.usage import calculate_cost
from ctxmodes.providers.wire import ArgumentBuffer, Emit, JsonObject, WireEvent

#: The fields a server may stream thinking in, in the order Pi prefers them.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def is_reasoning_detail(detail: Any) -> bool:
    if not isinstance(detail, dict):
        return False
    if detail.get("id") is not None and not isinstance(detail["id"], str):
        return False
    if "format" in detail and not isinstance(detail["format"], str):
        return False
    if "index" in detail and (
        not isinstance(detail["index"], int | float) or isinstance(detail["index"], bool)
    ):
        return False
    kind = detail.get("type")
    if kind == "reasoning.summary":
        return isinstance(detail.get("summary"), str)
    if kind == "reasoning.encrypted":
        return isinstance(detail.get("data"), str)
    if kind == "reasoning.text":
        signature = detail.get("signature")
        return isinstance(detail.get("text"), str) and (
            signature is None or isinstance(signature, str)
        )
    return False


def parse_usage(raw: JsonObject, model: ModelSpec) -> JsonObject:
    """A usage object in Pi's shape; ``totalTokens`` is recomputed, as Pi does."""
    details = raw.get("prompt_tokens_details") or {}
    cache_read = _first_defined(
        details.get("cached_tokens"), raw.get("prompt_cache_hit_tokens"), raw.get("cached_tokens")
    )
    cache_write = details.get("cache_write_tokens") or 0
    prompt = raw.get("prompt_tokens") or 0
    output = raw.get("completion_tokens") or 0
    fresh = max(0, prompt - cache_read - cache_write)
    usage: JsonObject = {
        "input": fresh,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "reasoning": (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0,
        "totalTokens": fresh + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    calculate_cost(model, usage)
    return usage


def _first_defined(*values: Any) -> Any:
    return next((value for value in values if value is not None), 0)


def map_finish_reason(reason: str) -> tuple[str, str | None]:
    if reason in ("stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def content_text(content: Any) -> str:
    """The text inside a typed content part (or a list of them)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(content_text(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "thinking", "content"):
            if key in content:
                return content_text(content[key])
    return ""


class CompletionsStream:
    """Reads chunks into ``output`` and emits pi-ai's events; :meth:`finish` ends it."""

    def __init__(self, model: ModelSpec, output: JsonObject, emit: Emit) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._blocks: list[JsonObject] = output["content"]
        self._text: JsonObject | None = None
        self._thinking: JsonObject | None = None
        self._by_index: dict[Any, JsonObject] = {}
        self._by_id: dict[str, JsonObject] = {}
        self._details: list[JsonObject] | None = None
        self.has_finish_reason = False

    def _index(self, block: JsonObject) -> int:
        # Blocks only grow at the end and the caller's block is usually the last one.
        for position in range(len(self._blocks) - 1, -1, -1):
            if self._blocks[position] is block:
                return position
        return -1

    def _add(self, block: JsonObject, kind: str) -> None:
        self._blocks.append(block)
        self._emit(WireEvent(kind, content_index=len(self._blocks) - 1))

    def feed(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            return
        output = self._output
        if not output.get("responseId") and chunk.get("id"):
            output["responseId"] = chunk["id"]
        served = chunk.get("model")
        if (
            isinstance(served, str)
            and served
            and served != self._model.id
            and not output.get("responseModel")
        ):
            output["responseModel"] = served
        if chunk.get("usage"):
            output["usage"] = parse_usage(chunk["usage"], self._model)
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            return
        if not chunk.get("usage") and choice.get("usage"):
            output["usage"] = parse_usage(choice["usage"], self._model)
        if choice.get("finish_reason"):
            output["rawStopReason"] = choice["finish_reason"]
            stop, error = map_finish_reason(choice["finish_reason"])
            output["stopReason"] = stop
            if error:
                output["errorMessage"] = error
            self.has_finish_reason = True
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(delta)

    def _delta(self, delta: JsonObject) -> None:
        content = delta.get("content")
        if isinstance(content, list):
            # Typed parts (Mistral): thinking parts are thinking, the rest is text.
            for part in content:
                if isinstance(part, dict) and part.get("type") == "thinking":
                    self._add_thinking(content_text(part.get("thinking")), None)
                else:
                    self._add_text(content_text(part))
        elif isinstance(content, str):
            self._add_text(content)
        for field in REASONING_FIELDS:
            value = delta.get(field)
            if isinstance(value, str) and value:
                signature = (
                    "reasoning_content"
                    if self._model.provider == "opencode-go" and field == "reasoning"
                    else field
                )
                self._add_thinking(value, signature)
                break
        for call in delta.get("tool_calls") or ():
            if isinstance(call, dict):
                self._tool_call(call)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            for detail in details:
                if is_reasoning_detail(detail):
                    self._thinking_block("")
                    if self._details is None:
                        self._details = []
                    _append_detail(self._details, detail)

    def _add_text(self, text: str) -> None:
        if not text:
            return
        if self._text is None:
            self._text = {"type": "text", "text": ""}
            self._add(self._text, "text_start")
        self._text["text"] += text
        self._emit(WireEvent("text_delta", self._index(self._text), delta=text))

    def _add_thinking(self, text: str, signature: str | None) -> None:
        if not text:
            return
        block = self._thinking_block(signature)
        block["thinking"] += text
        self._emit(WireEvent("thinking_delta", self._index(block), delta=text))

    def _thinking_block(self, signature: str | None) -> JsonObject:
        if self._thinking is None:
            self._thinking = {"type": "thinking", "thinking": ""}
            if signature is not None:
                self._thinking["thinkingSignature"] = signature
            self._add(self._thinking, "thinking_start")
        return self._thinking

    def _tool_call(self, call: JsonObject) -> None:
        function = call.get("function") or {}
        stream_index = call.get("index") if isinstance(call.get("index"), int) else None
        call_id = call.get("id")
        name = function.get("name") or ""
        block = self._by_index.get(stream_index) if stream_index is not None else None
        if block is None and call_id:
            block = self._by_id.get(call_id)
        if block is None:
            block = {
                "type": "toolCall",
                "id": call_id or "",
                "name": name,
                "arguments": {},
                "partialArgs": ArgumentBuffer(),
            }
            if stream_index is not None:
                self._by_index[stream_index] = block
            self._add(block, "toolcall_start")
        elif stream_index is not None and stream_index not in self._by_index:
            self._by_index[stream_index] = block
        if call_id:
            self._by_id[call_id] = block
            if not block["id"]:
                block["id"] = call_id
        if not block["name"] and name:
            block["name"] = name
        piece = function.get("arguments") or ""
        block["partialArgs"].append(piece)
        self._emit(WireEvent("toolcall_delta", self._index(block), delta=piece))

    def _apply_details(self) -> None:
        if self._thinking is not None and self._details is not None:
            self._thinking["thinkingSignature"] = stringify(self._details)

    def finish(self) -> None:
        """The ``*_end`` events, for every block in content order (Pi sends them last)."""
        for position, block in enumerate(self._blocks):
            kind = block["type"]
            if kind == "text":
                self._emit(WireEvent("text_end", position, content=block["text"]))
            elif kind == "thinking":
                self._apply_details()
                self._emit(
                    WireEvent(
                        "thinking_end", position, content=block["thinking"], thinking=dict(block)
                    )
                )
            elif kind == "toolCall":
                block["arguments"] = parse_streaming_json(block.pop("partialArgs").text())
                self._emit(WireEvent("toolcall_end", position, tool_call=dict(block)))

    def fail(self) -> None:
        """What a failure keeps: reasoning details are still written to the signature."""
        self._apply_details()


def _append_detail(details: list[JsonObject], detail: JsonObject) -> None:
    """Consecutive text or summary pieces merge into one entry, as OpenRouter streams them."""
    last = details[-1] if details else None
    if last is not None and detail["type"] == last["type"] == "reasoning.text":
        last["text"] += detail["text"]
        if not last.get("signature"):
            _assign(last, "signature", detail)
        _fill_common(last, detail)
    elif last is not None and detail["type"] == last["type"] == "reasoning.summary":
        last["summary"] += detail["summary"]
        _fill_common(last, detail)
    else:
        details.append(dict(detail))


def _assign(target: JsonObject, key: str, source: JsonObject) -> None:
    # JavaScript's ``target[key] = source[key]``: a missing value leaves no key behind.
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _fill_common(target: JsonObject, source: JsonObject) -> None:
    if target.get("id") is None:
        _assign(target, "id", source)
    if not target.get("format"):
        _assign(target, "format", source)
    if target.get("index") is None:
        _assign(target, "index", source)
