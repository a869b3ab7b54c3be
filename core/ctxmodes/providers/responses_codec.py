"""The OpenAI Responses wire format, shared by the OpenAI and the Codex endpoints.

:func:`convert_messages` and :func:`convert_tools` build the request's ``input`` and
``tools`` exactly as pi-ai does; :class:`ResponsesStream` reads the response's events into
an assistant message. Endpoints differ only in URL, headers, body keys and error wording
(:mod:`~ctxmodes.providers.openai_responses`, :mod:`~ctxmodes.providers.codex`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import (
    parse_streaming_json,
    sanitize_surrogates,
    short_hash,
    stringify,
)
from ctxmodes.providers.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.transform import transform_messages
from ctxmodes.providers.wire import (
    ArgumentBuffer,
    Emit,
    WireError,
    WireEvent,
    apply_service_tier,
    calculate_cost,
)

#: Providers whose tool-call ids have Responses' ``call|item`` form.
RESPONSES_ID_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_TRAILING_UNDERSCORES = re.compile(r"_+$")


def _normalize_id_part(part: str) -> str:
    return _TRAILING_UNDERSCORES.sub("", _NOT_ID_CHAR.sub("_", part)[:64])


def _tool_call_id_normalizer(model: ModelSpec) -> Callable[[str, ModelSpec, dict[str, Any]], str]:
    def normalize(call_id: str, _target: ModelSpec, source: dict[str, Any]) -> str:
        if model.provider not in RESPONSES_ID_PROVIDERS or "|" not in call_id:
            return _normalize_id_part(call_id)
        call_part, item_part = call_id.split("|")[:2]
        foreign = source.get("provider") != model.provider or source.get("api") != model.api
        item = f"fc_{short_hash(item_part)}"[:64] if foreign else _normalize_id_part(item_part)
        if not item.startswith("fc_"):
            item = _normalize_id_part(f"fc_{item}")
        return f"{_normalize_id_part(call_part)}|{item}"

    return normalize


def _parse_text_signature(signature: str | None) -> tuple[str, str | None] | None:
    if not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = orjson.loads(signature)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _text_signature(item_id: str | None, phase: str | None) -> str:
    payload: dict[str, Any] = {"v": 1}
    if item_id is not None:
        payload["id"] = item_id
    if phase:
        payload["phase"] = phase
    return stringify(payload)


def _image_url(block: dict[str, Any]) -> str:
    return f"data:{block['mimeType']};base64,{block['data']}"


def _tool_output(model: ModelSpec, content: list[dict[str, Any]]) -> Any:
    text = "\n".join(block["text"] for block in content if block.get("type") == "text")
    images = [block for block in content if block.get("type") == "image"]
    if not images or not model.images:
        if text:
            return sanitize_surrogates(text)
        return "(see attached image)" if images else "(no tool output)"
    output: list[dict[str, Any]] = []
    if text:
        output.append({"type": "input_text", "text": sanitize_surrogates(text)})
    output.extend(
        {"type": "input_image", "detail": "auto", "image_url": _image_url(image)}
        for image in images
    )
    return output


def convert_messages(
    model: ModelSpec,
    system_prompt: str | None,
    messages: list[dict[str, Any]],
    now_ms: Callable[[], int],
    *,
    include_system_prompt: bool = True,
) -> list[dict[str, Any]]:
    """The request's ``input`` items (pi-ai's ``convertResponsesMessages``)."""
    items: list[dict[str, Any]] = []
    history = transform_messages(messages, model, _tool_call_id_normalizer(model), now_ms)
    if include_system_prompt and system_prompt:
        developer = model.reasoning and model.flag("supportsDeveloperRole", True) is not False
        role = "developer" if developer else "system"
        items.append({"role": role, "content": sanitize_surrogates(system_prompt)})
    message_index = 0
    for message in history:
        kind = message.get("role")
        if kind == "user":
            content = message["content"]
            if isinstance(content, str):
                items.append(
                    {"role": "user", "content": [{"type": "input_text", "text": _clean(content)}]}
                )
            else:
                parts = [
                    {"type": "input_text", "text": _clean(block["text"])}
                    if block.get("type") == "text"
                    else {"type": "input_image", "detail": "auto", "image_url": _image_url(block)}
                    for block in content
                ]
                if not parts:
                    continue
                items.append({"role": "user", "content": parts})
        elif kind == "assistant":
            output = list(_assistant_items(model, message, message_index))
            if not output:
                continue
            items.extend(output)
        elif kind == "developer":
            # Harness instructions (ctxmodes' modes); Pi has no such message.
            developer = model.flag("supportsDeveloperRole", True) is not False
            text = "\n".join(block.get("text", "") for block in message["content"])
            items.append({"role": "developer" if developer else "system", "content": _clean(text)})
        elif kind == "encryptedToolOutput":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["toolCallId"].split("|")[0],
                    "output": message["output"],
                }
            )
        elif kind == "toolResult":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["toolCallId"].split("|")[0],
                    "output": _tool_output(model, message["content"]),
                }
            )
        message_index += 1
    return items


def _clean(text: str) -> str:
    return sanitize_surrogates(text)


def _assistant_items(
    model: ModelSpec, message: dict[str, Any], message_index: int
) -> Iterable[dict[str, Any]]:
    same_api = message.get("provider") == model.provider and message.get("api") == model.api
    same_model = same_api and message.get("model") == model.id
    other_model = same_api and not same_model
    text_index = 0
    for block in message["content"]:
        kind = block.get("type")
        if kind == "thinking":
            if block.get("thinkingSignature"):
                yield orjson.loads(block["thinkingSignature"])
        elif kind == "text":
            signature = _parse_text_signature(block.get("textSignature"))
            fallback = (
                f"msg_pi_{message_index}"
                if text_index == 0
                else f"msg_pi_{message_index}_{text_index}"
            )
            text_index += 1
            message_id = signature[0] if signature else ""
            if not message_id:
                message_id = fallback
            elif len(message_id) > 64:
                message_id = f"msg_{short_hash(message_id)}"
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": _clean(block["text"]), "annotations": []}
                ],
                "status": "completed",
                "id": message_id,
            }
            if signature and signature[1]:
                item["phase"] = signature[1]
            yield item
        elif kind == "toolCall":
            id_parts = block["id"].split("|")
            call_id = id_parts[0]
            item_id: str | None = id_parts[1] if len(id_parts) > 1 else None
            if (other_model and item_id and item_id.startswith("fc_")) or not (
                item_id or ""
            ).startswith("fc_"):
                item_id = None
            call: dict[str, Any] = {"type": "function_call"}
            if item_id is not None:
                call["id"] = item_id
            call["call_id"] = call_id
            call["name"] = block["name"]
            call["arguments"] = stringify(block["arguments"])
            if same_model and block.get("namespace") is not None:
                call["namespace"] = block["namespace"]
            yield call


def _function_tool(tool: dict[str, Any], default: bool | None, with_strict: bool) -> dict[str, Any]:
    constrained = resolve_strict(tool, with_strict)
    strict = default if constrained is None else constrained
    converted: dict[str, Any] = {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool_parameters(tool, strict),
    }
    if with_strict:
        converted["strict"] = strict
    return converted


def convert_tools(
    tools: list[dict[str, Any]], *, strict: bool | None = False, supports_strict: bool = True
) -> list[dict[str, Any]]:
    """Function tools (``strict`` as Pi sets it: ``strict`` unless the tool asks for
    constrained sampling, :mod:`~ctxmodes.providers.strict_schema`), and namespaces of
    function tools.

    A context tool with a ``tools`` list is a namespace (``{"type": "namespace", …}``): Pi
    cannot send those; ctxmodes does, on endpoints that accept them.
    """
    converted: list[dict[str, Any]] = []
    for tool in tools:
        if "tools" in tool:
            converted.append(
                {
                    "type": "namespace",
                    "name": tool["name"],
                    "description": tool["description"],
                    "tools": [
                        _function_tool(inner, strict, supports_strict) for inner in tool["tools"]
                    ],
                }
            )
        else:
            converted.append(_function_tool(tool, strict, supports_strict))
    return converted


class ResponsesStream:
    """Reads Responses events into ``output`` (pi-ai's ``processResponsesStream``).

    :param resolve_tier: which service tier the response is priced at, from the response's
        ``service_tier`` and the requested one.
    """

    def __init__(
        self,
        model: ModelSpec,
        output: dict[str, Any],
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
        self._slots: dict[Any, tuple[str, dict[str, Any], int]] = {}
        self._reasoning_by_id: dict[str, dict[str, Any]] = {}
        self.terminal = False

    # ------------------------------------------------------------------ slots

    def _phase_stop(self, item: dict[str, Any]) -> None:
        if item.get("type") == "message" and item.get("phase") == "final_answer":
            self._output["stopReason"] = "stop"

    def _create(self, index: Any, item: dict[str, Any]) -> tuple[str, dict[str, Any], int] | None:
        kind = item.get("type")
        content = self._output["content"]
        if kind == "reasoning":
            block: dict[str, Any] = {"type": "thinking", "thinking": ""}
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

    def _slot(self, index: Any, kind: str) -> tuple[str, dict[str, Any], int] | None:
        slot = self._slots.get(index)
        return slot if slot is not None and slot[0] == kind else None

    # ------------------------------------------------------------------ events

    def feed(self, event: dict[str, Any]) -> None:
        """Apply one event.

        :raises WireError: the event reports a failure (its text is the ``errorMessage``).
        """
        kind = event.get("type")
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is not None:
            handler(self, event)

    def _created(self, event: dict[str, Any]) -> None:
        self._output["responseId"] = (event.get("response") or {}).get("id")

    def _item_added(self, event: dict[str, Any]) -> None:
        self._create(event.get("output_index"), event.get("item") or {})

    def _thinking_delta(self, event: dict[str, Any]) -> None:
        slot = self._slot(event.get("output_index"), "thinking")
        if slot is not None:
            slot[1]["thinking"] += event["delta"]
            self._emit(WireEvent("thinking_delta", content_index=slot[2], delta=event["delta"]))

    def _summary_part_done(self, event: dict[str, Any]) -> None:
        slot = self._slot(event.get("output_index"), "thinking")
        if slot is not None:
            slot[1]["thinking"] += "\n\n"
            self._emit(WireEvent("thinking_delta", content_index=slot[2], delta="\n\n"))

    def _text_delta(self, event: dict[str, Any]) -> None:
        slot = self._slot(event.get("output_index"), "text")
        if slot is not None:
            slot[1]["text"] += event["delta"]
            self._emit(WireEvent("text_delta", content_index=slot[2], delta=event["delta"]))

    def _arguments_delta(self, event: dict[str, Any]) -> None:
        slot = self._slot(event.get("output_index"), "toolCall")
        if slot is None or "partialJson" not in slot[1]:
            return
        block = slot[1]
        block["partialJson"].append(event["delta"])
        self._emit(WireEvent("toolcall_delta", content_index=slot[2], delta=event["delta"]))

    def _arguments_done(self, event: dict[str, Any]) -> None:
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

    def _item_done(self, event: dict[str, Any]) -> None:
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
                WireEvent("thinking_end", content_index=content_index, content=block["thinking"])
            )
        elif item_kind == "message" and kind == "text":
            parts = item.get("content") or []
            block["text"] = "".join(
                (part.get("text") if part.get("type") == "output_text" else part.get("refusal"))
                or ""
                for part in parts
            )
            block["textSignature"] = _text_signature(item.get("id"), item.get("phase"))
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

    def _completed(self, event: dict[str, Any]) -> None:
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

    def _backfill_reasoning(self, items: list[dict[str, Any]]) -> None:
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

    def _error(self, event: dict[str, Any]) -> None:
        raise WireError(f"Error Code {event.get('code')}: {event.get('message')}")

    def _failed(self, event: dict[str, Any]) -> None:
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


_HANDLERS: dict[str, Callable[[ResponsesStream, dict[str, Any]], None]] = {
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
