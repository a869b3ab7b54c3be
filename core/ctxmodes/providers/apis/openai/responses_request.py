"""The Responses request, shared by the OpenAI, Codex (and Azure) endpoints.

:func:`convert_messages` and :func:`convert_tools` build the request's ``input`` and
``tools`` exactly as pi-ai does; the events coming back are read by
:mod:`~ctxmodes.providers.apis.openai.responses_stream`. Endpoints differ only in URL,
headers, body keys and error wording.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import (
    sanitize_surrogates,
    short_hash,
    stringify,
)
from ctxmodes.providers.transport.history import transform_messages
from ctxmodes.providers.transport.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.wire import JsonObject

#: Prompt cache keys are cut to this many characters (code points).
PROMPT_CACHE_KEY_MAX = 64
#: Providers whose tool-call ids have Responses' ``call|item`` form.
RESPONSES_ID_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_TRAILING_UNDERSCORES = re.compile(r"_+$")


def _normalize_id_part(part: str) -> str:
    return _TRAILING_UNDERSCORES.sub("", _NOT_ID_CHAR.sub("_", part)[:64])


def _tool_call_id_normalizer(
    model: ModelSpec, id_providers: frozenset[str] = RESPONSES_ID_PROVIDERS
) -> Callable[[str, ModelSpec, JsonObject], str]:
    def normalize(call_id: str, _target: ModelSpec, source: JsonObject) -> str:
        if model.provider not in id_providers or "|" not in call_id:
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


def _image_url(block: JsonObject) -> str:
    return f"data:{block['mimeType']};base64,{block['data']}"


def _tool_output(model: ModelSpec, content: list[JsonObject]) -> Any:
    text = "\n".join(block["text"] for block in content if block.get("type") == "text")
    images = [block for block in content if block.get("type") == "image"]
    if not images or not model.images:
        if text:
            return sanitize_surrogates(text)
        return "(see attached image)" if images else "(no tool output)"
    output: list[JsonObject] = []
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
    messages: list[JsonObject],
    now_ms: Callable[[], int],
    *,
    include_system_prompt: bool = True,
    id_providers: frozenset[str] = RESPONSES_ID_PROVIDERS,
) -> list[JsonObject]:
    """The request's ``input`` items (pi-ai's ``convertResponsesMessages``); tool-call ids
    of ``id_providers`` keep their ``call|item`` form."""
    items: list[JsonObject] = []
    normalize = _tool_call_id_normalizer(model, id_providers)
    history = transform_messages(messages, model, normalize, now_ms)
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
    model: ModelSpec, message: JsonObject, message_index: int
) -> Iterable[JsonObject]:
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
            item: JsonObject = {
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
            call: JsonObject = {"type": "function_call"}
            if item_id is not None:
                call["id"] = item_id
            call["call_id"] = call_id
            call["name"] = block["name"]
            call["arguments"] = stringify(block["arguments"])
            if same_model and block.get("namespace") is not None:
                call["namespace"] = block["namespace"]
            yield call


def _function_tool(tool: JsonObject, default: bool | None, with_strict: bool) -> JsonObject:
    constrained = resolve_strict(tool, with_strict)
    strict = default if constrained is None else constrained
    converted: JsonObject = {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool_parameters(tool, strict),
    }
    if with_strict:
        converted["strict"] = strict
    return converted


def convert_tools(
    tools: list[JsonObject], *, strict: bool | None = False, supports_strict: bool = True
) -> list[JsonObject]:
    """Function tools (``strict`` as Pi sets it: ``strict`` unless the tool asks for
    constrained sampling, :mod:`~ctxmodes.providers.transport.strict_schema`), and namespaces of
    function tools.

    A context tool with a ``tools`` list is a namespace (``{"type": "namespace", …}``): Pi
    cannot send those; ctxmodes does, on endpoints that accept them.
    """
    converted: list[JsonObject] = []
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


def clamp_cache_key(key: str | None) -> str | None:
    """Session ids become prompt cache keys of at most 64 characters (code points)."""
    return None if key is None else key[:PROMPT_CACHE_KEY_MAX]


def add_reasoning(
    body: JsonObject,
    model: ModelSpec,
    effort: str | None,
    summary: str | None,
    *,
    turn_off: bool = True,
) -> None:
    """pi-ai's reasoning fields of a Responses request, for a reasoning model: the effort
    (mapped by the model's level table, "medium" when only a summary is asked for) with its
    summary and the encrypted reasoning kept; with neither, thinking turned off explicitly
    where the level table allows it and ``turn_off`` holds."""
    if not model.reasoning:
        return
    levels = model.thinking_level_map or {}
    if effort or summary:
        body["reasoning"] = {
            "effort": (levels.get(effort) or effort) if effort else "medium",
            "summary": summary or "auto",
        }
        body["include"] = ["reasoning.encrypted_content"]
    elif turn_off and not ("off" in levels and levels["off"] is None):
        body["reasoning"] = {"effort": levels.get("off") or "none"}
