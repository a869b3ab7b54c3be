"""The Responses events, read into an assistant message (pi-ai's ``processResponsesStream``),
shared by the OpenAI, Codex (and Azure) endpoints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import parse_streaming_json, stringify
from ctxmodes.providers.transport.usage import apply_service_tier, calculate_cost
from ctxmodes.providers.wire import ArgumentBuffer, Emit, JsonObject, WireError, WireEvent


def text_signature(item_id: str | None, phase: str | None) -> str:
    payload: JsonObject = {"v": 1}
    if item_id is not None:
        payload["id"] = item_id
    if phase:
        payload["phase"] = phase
    return stringify(payload)


class ResponsesStream:
    """Reads Responses events into ``output`` (pi-ai's ``processResponsesStream``).

    :param resolve_tier: which service tier the response is priced at, from the response's
        ``service_tier`` and the requested one.
    """

    def __init__(
        self,
        model: ModelSpec,
        output: JsonObject,
        emit: Emit,
        *,
        service_tier: str | None = None,
        resolve_tier: Callable[[str | None, str | None], str | None] | None = None,
    ) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._service_tier = service_tier
        self._resolve_tier = resolve_tier
        self._slots: dict[Any, tuple[str, JsonObject, int]] = {}
        self._reasoning_by_id: dict[str, JsonObject] = {}
        self.terminal = False

    # ------------------------------------------------------------------ slots

    def _phase_stop(self, item: JsonObject) -> None:
        if item.get("type") == "message" and item.get("phase") == "final_answer":
            self._output["stopReason"] = "stop"

    def _create(self, index: Any, item: JsonObject) -> tuple[str, JsonObject, int] | None:
        kind = item.get("type")
        content = self._output["content"]
        if kind == "reasoning":
            block: JsonObject = {"type": "thinking", "thinking": ""}
            event = "thinking_start"
            slot_kind = "thinking"
        elif kind == "message":
            self._phase_stop(item)
            block = {"type": "text", "text": ""}
            event = "text_start"
            slot_kind = "text"
        elif kind == "function_call":
            block = {
                "type": "toolCall",
                "id": f"{item.get('call_id')}|{item.get('id')}",
                "name": item.get("name"),
                "arguments": {},
            }
            if item.get("namespace") is not None:
                block["namespace"] = item["namespace"]
            block["partialJson"] = ArgumentBuffer(item.get("arguments") or "")
            event = "toolcall_start"
            slot_kind = "toolCall"
        else:
            return None
        content.append(block)
        slot = (slot_kind, block, len(content) - 1)
        self._slots[index] = slot
        self._emit(WireEvent(event, content_index=slot[2]))
        return slot

    def _slot(self, index: Any, kind: str) -> tuple[str, JsonObject, int] | None:
        slot = self._slots.get(index)
        return slot if slot is not None and slot[0] == kind else None

    # ------------------------------------------------------------------ events

    def feed(self, event: JsonObject) -> None:
        """Apply one event.

        :raises WireError: the event reports a failure (its text is the ``errorMessage``).
        """
        kind = event.get("type")
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is not None:
            handler(self, event)

    def _created(self, event: JsonObject) -> None:
        self._output["responseId"] = (event.get("response") or {}).get("id")

    def _item_added(self, event: JsonObject) -> None:
        self._create(event.get("output_index"), event.get("item") or {})

    def _thinking_delta(self, event: JsonObject) -> None:
        slot = self._slot(event.get("output_index"), "thinking")
        if slot is not None:
            slot[1]["thinking"] += event["delta"]
            self._emit(WireEvent("thinking_delta", content_index=slot[2], delta=event["delta"]))

    def _summary_part_done(self, event: JsonObject) -> None:
        slot = self._slot(event.get("output_index"), "thinking")
        if slot is not None:
            slot[1]["thinking"] += "\n\n"
            self._emit(WireEvent("thinking_delta", content_index=slot[2], delta="\n\n"))

    def _text_delta(self, event: JsonObject) -> None:
        slot = self._slot(event.get("output_index"), "text")
        if slot is not None:
            slot[1]["text"] += event["delta"]
            self._emit(WireEvent("text_delta", content_index=slot[2], delta=event["delta"]))

    def _arguments_delta(self, event: JsonObject) -> None:
        slot = self._slot(event.get("output_index"), "toolCall")
        if slot is None or "partialJson" not in slot[1]:
            return
        block = slot[1]
        block["partialJson"].append(event["delta"])
        self._emit(WireEvent("toolcall_delta", content_index=slot[2], delta=event["delta"]))

    def _arguments_done(self, event: JsonObject) -> None:
        slot = self._slot(event.get("output_index"), "toolCall")
        if slot is None or "partialJson" not in slot[1]:
            return
        block = slot[1]
        previous = block["partialJson"].text()
        arguments = event.get("arguments") or ""
        block["partialJson"] = ArgumentBuffer(arguments)
        block["arguments"] = parse_streaming_json(arguments)
        if arguments.startswith(previous) and len(arguments) > len(previous):
            delta = arguments[len(previous) :]
            self._emit(WireEvent("toolcall_delta", content_index=slot[2], delta=delta))

    def _item_done(self, event: JsonObject) -> None:
        item = event.get("item") or {}
        index = event.get("output_index")
        self._phase_stop(item)
        slot = self._slots.get(index) or self._create(index, item)
        if slot is None:
            return
        kind, block, content_index = slot
        item_kind = item.get("type")
        if item_kind == "reasoning" and kind == "thinking":
            summary = "\n\n".join(part.get("text", "") for part in item.get("summary") or [])
            text = "\n\n".join(part.get("text", "") for part in item.get("content") or [])
            block["thinking"] = summary or text or block["thinking"]
            block["thinkingSignature"] = stringify(item)
            self._reasoning_by_id[str(item.get("id"))] = block
            self._emit(
                WireEvent(
                    "thinking_end",
                    content_index=content_index,
                    content=block["thinking"],
                    thinking=dict(block),
                )
            )
        elif item_kind == "message" and kind == "text":
            parts = item.get("content") or []
            block["text"] = "".join(
                (part.get("text") if part.get("type") == "output_text" else part.get("refusal"))
                or ""
                for part in parts
            )
            block["textSignature"] = text_signature(item.get("id"), item.get("phase"))
            self._emit(WireEvent("text_end", content_index=content_index, content=block["text"]))
        elif item_kind == "function_call" and kind == "toolCall" and "partialJson" in block:
            block["arguments"] = parse_streaming_json(
                item.get("arguments") or block["partialJson"].text() or "{}"
            )
            if item.get("namespace") is not None:
                block["namespace"] = item["namespace"]
            del block["partialJson"]
            self._emit(
                WireEvent("toolcall_end", content_index=content_index, tool_call=dict(block))
            )
        else:
            return
        self._slots.pop(index, None)

    def _completed(self, event: JsonObject) -> None:
        self.terminal = True
        response = event.get("response") or {}
        output = self._output
        self._backfill_reasoning(response.get("output") or [])
        if response.get("id"):
            output["responseId"] = response["id"]
        usage = response.get("usage")
        if usage:
            details = usage.get("input_tokens_details") or {}
            cached = details.get("cached_tokens") or 0
            written = details.get("cache_write_tokens") or 0
            output["usage"] = {
                "input": max(0, (usage.get("input_tokens") or 0) - cached - written),
                "output": usage.get("output_tokens") or 0,
                "cacheRead": cached,
                "cacheWrite": written,
                "reasoning": (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
                or 0,
                "totalTokens": usage.get("total_tokens") or 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            }
        calculate_cost(self._model, output["usage"])
        tier = (
            self._resolve_tier(response.get("service_tier"), self._service_tier)
            if self._resolve_tier is not None
            else response.get("service_tier") or self._service_tier
        )
        apply_service_tier(self._model, output["usage"], tier)
        status = response.get("status")
        details = response.get("incomplete_details") or {}
        reason = details.get("reason") if isinstance(details.get("reason"), str) else None
        raw = f"{status}.{reason}" if reason else status
        if raw is None:
            output.pop("rawStopReason", None)
        else:
            output["rawStopReason"] = raw
        stop, error = _stop_reason(status, reason)
        output["stopReason"] = stop
        if error is None:
            output.pop("errorMessage", None)
        else:
            output["errorMessage"] = error
        if stop == "stop" and any(block.get("type") == "toolCall" for block in output["content"]):
            output["stopReason"] = "toolUse"

    def _backfill_reasoning(self, items: list[JsonObject]) -> None:
        for item in items:
            if item.get("type") != "reasoning" or not item.get("encrypted_content"):
                continue
            block = self._reasoning_by_id.get(str(item.get("id")))
            if block is None or not block.get("thinkingSignature"):
                continue
            stored = orjson.loads(block["thinkingSignature"])
            if not stored.get("encrypted_content"):
                stored["encrypted_content"] = item["encrypted_content"]
                block["thinkingSignature"] = stringify(stored)

    def _error(self, event: JsonObject) -> None:
        raise WireError(f"Error Code {event.get('code')}: {event.get('message')}")

    def _failed(self, event: JsonObject) -> None:
        self.terminal = True
        response = event.get("response") or {}
        if response.get("status") is None:
            self._output.pop("rawStopReason", None)
        else:
            self._output["rawStopReason"] = response["status"]
        error = response.get("error")
        details = response.get("incomplete_details") or {}
        if error:
            raise WireError(
                f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
            )
        if details.get("reason"):
            raise WireError(f"incomplete: {details['reason']}")
        raise WireError("Unknown error (no error details in response)")


def _stop_reason(status: str | None, reason: str | None) -> tuple[str, str | None]:
    if status in (None, "completed", "in_progress", "queued"):
        return "stop", None
    if status == "incomplete":
        if reason == "max_output_tokens":
            return "length", None
        text = (
            f"Response incomplete: {reason}"
            if reason
            else "Response incomplete without a provider reason"
        )
        return "error", text
    if status in ("failed", "cancelled"):
        return "error", None
    raise WireError(f"Unhandled stop reason: {status}")


_HANDLERS: dict[str, Callable[[ResponsesStream, JsonObject], None]] = {
    "response.created": ResponsesStream._created,
    "response.output_item.added": ResponsesStream._item_added,
    "response.reasoning_summary_text.delta": ResponsesStream._thinking_delta,
    "response.reasoning_text.delta": ResponsesStream._thinking_delta,
    "response.reasoning_summary_part.done": ResponsesStream._summary_part_done,
    "response.output_text.delta": ResponsesStream._text_delta,
    "response.refusal.delta": ResponsesStream._text_delta,
    "response.function_call_arguments.delta": ResponsesStream._arguments_delta,
    "response.function_call_arguments.done": ResponsesStream._arguments_done,
    "response.output_item.done": ResponsesStream._item_done,
    "response.completed": ResponsesStream._completed,
    "response.incomplete": ResponsesStream._completed,
    "error": ResponsesStream._error,
    "response.failed": ResponsesStream._failed,
}
