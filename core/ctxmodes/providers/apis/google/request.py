"""The Gemini request shared by the Google AI and Vertex formats (pi-ai 0.85's
``google-shared``): contents, function declarations, tool configuration and thinking, in
the REST shape ``@google/genai`` sends.

The format has no developer role: ctxmodes' developer messages (the window marker) become
further parts of the system instruction, never a user turn. Replays send function-call ids
only to models that require them (Gemini 3+, Claude and
gpt-oss behind Google) and send a recorded thought signature back only to the same provider
and model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import sanitize_surrogates
from ctxmodes.providers.transport.history import transform_messages
from ctxmodes.providers.transport.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.wire import (
    JsonObject,
    PiContext,
    PiMessage,
    StreamOptions,
    WireError,
    developer_texts,
)

IMAGE_ONLY_TEXT = "(see attached image)"
TOOL_IMAGE_TEXT = "Tool result image:"
#: pi-ai's default Gemini 2.5 thinking budgets per level.
BUDGETS_25_PRO = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}
BUDGETS_25_FLASH = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}
BUDGETS_25_FLASH_LITE = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
GOOGLE_LEVELS = ("minimal", "low", "medium", "high")

_SIGNATURE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_GEMINI_3_PRO = re.compile(r"gemini-3(?:\.\d+)?-pro")
_GEMINI_3_FLASH = re.compile(r"gemini-3(?:\.\d+)?-flash")
_GEMMA_4 = re.compile(r"gemma-?4")


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """No developer role: instructions of the system's authority go into the system
    instruction."""
    return ModelCapabilities(
        developer_role=False,
        namespaced_tools=False,
        images=model.images,
        reasoning=model.reasoning,
    )


def gemini_major(model_id: str) -> int | None:
    found = _GEMINI_MAJOR.match(model_id.lower())
    return int(found.group(1)) if found else None


def requires_tool_call_id(model_id: str) -> bool:
    major = gemini_major(model_id)
    return model_id.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def is_gemini_3_pro(model: ModelSpec) -> bool:
    return bool(_GEMINI_3_PRO.search(model.id.lower()))


def is_gemini_3_flash(model: ModelSpec) -> bool:
    model_id = model.id.lower()
    return bool(_GEMINI_3_FLASH.search(model_id)) or model_id in (
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
    )


def is_gemma_4(model: ModelSpec) -> bool:
    return bool(_GEMMA_4.search(model.id.lower()))


def supports_strict_tools(model: ModelSpec) -> bool:
    """Gemini 3+ enforces required parameters in validated function calling."""
    major = gemini_major(model.id)
    return major is not None and major >= 3


def _valid_signature(signature: object) -> bool:
    return (
        isinstance(signature, str)
        and bool(signature)
        and len(signature) % 4 == 0
        and bool(_SIGNATURE.match(signature))
    )


def _signature(same: bool, signature: object) -> str | None:
    return (
        signature if same and _valid_signature(signature) and isinstance(signature, str) else None
    )


def google_budget(
    level: str, custom: Mapping[str, int] | None, defaults: Mapping[str, int] | None
) -> int:
    """pi-ai's ``getGoogleBudget``: the user's budget for the level, else the model's
    default, else ``-1`` (the model decides)."""
    if custom and level in custom:
        return custom[level]
    return defaults[level] if defaults else -1


@dataclass(frozen=True, slots=True)
class GoogleThinking:
    """What ``streamSimple`` decided: ``enabled`` with a level or a budget, or switched off."""

    enabled: bool
    level: str | None = None
    budget_tokens: int | None = None


# ---------------------------------------------------------------- contents


def convert_messages(
    model: ModelSpec, context: PiContext, now_ms: Callable[[], int]
) -> list[JsonObject]:
    """pi-ai's ``convertMessages`` for Gemini ``contents``."""
    with_ids = requires_tool_call_id(model.id)

    def normalize(call_id: str, _model: ModelSpec, _source: PiMessage) -> str:
        return _NOT_ID_CHAR.sub("_", call_id)[:64] if with_ids else call_id

    contents: list[JsonObject] = []
    for message in transform_messages(context.messages, model, normalize, now_ms):
        role = message.get("role")
        if role == "user":
            content = message["content"]
            if isinstance(content, str):
                contents.append({"role": "user", "parts": [{"text": sanitize_surrogates(content)}]})
                continue
            parts = [_user_part(item) for item in content]
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            parts = _model_parts(model, message, with_ids)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif role == "toolResult":
            _add_tool_result(model, message, with_ids, contents)
    return contents


def _user_part(item: JsonObject) -> JsonObject:
    if item.get("type") == "text":
        return {"text": sanitize_surrogates(item["text"])}
    return {"inlineData": {"mimeType": item.get("mimeType"), "data": item.get("data")}}


def _model_parts(model: ModelSpec, message: PiMessage, with_ids: bool) -> list[JsonObject]:
    same = message.get("provider") == model.provider and message.get("model") == model.id
    parts: list[JsonObject] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            signature = _signature(same, block.get("textSignature"))
            if not (block.get("text") or "").strip() and not signature:
                continue
            part: JsonObject = {"text": sanitize_surrogates(block.get("text") or "")}
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
        elif kind == "thinking":
            thinking = block.get("thinking") or ""
            if same:
                signature = _signature(same, block.get("thinkingSignature"))
                if not thinking.strip() and not signature:
                    continue
                part = {"thought": True, "text": sanitize_surrogates(thinking)}
                if signature:
                    part["thoughtSignature"] = signature
                parts.append(part)
            elif thinking.strip():
                parts.append({"text": sanitize_surrogates(thinking)})
        elif kind == "toolCall":
            arguments = block.get("arguments")
            call: JsonObject = {
                "name": block["name"],
                "args": arguments if arguments is not None else {},
            }
            if with_ids:
                call["id"] = block["id"]
            part = {"functionCall": call}
            signature = _signature(same, block.get("thoughtSignature"))
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
    return parts


def _add_tool_result(
    model: ModelSpec, message: PiMessage, with_ids: bool, contents: list[JsonObject]
) -> None:
    content = message["content"]
    text = "\n".join(block.get("text", "") for block in content if block.get("type") == "text")
    images = [block for block in content if block.get("type") == "image"] if model.images else []
    major = gemini_major(model.id)
    multimodal = major is None or major >= 3
    value = sanitize_surrogates(text) if text else (IMAGE_ONLY_TEXT if images else "")
    image_parts = [_user_part(image) for image in images]
    response: JsonObject = {
        "name": message.get("toolName"),
        "response": {"error": value} if message.get("isError") else {"output": value},
    }
    if images and multimodal:
        response["parts"] = image_parts
    if with_ids:
        response["id"] = message["toolCallId"]
    part = {"functionResponse": response}
    last = contents[-1] if contents else None
    if (
        last is not None
        and last["role"] == "user"
        and any("functionResponse" in existing for existing in last["parts"])
    ):
        last["parts"].append(part)
    else:
        contents.append({"role": "user", "parts": [part]})
    if images and not multimodal:
        contents.append({"role": "user", "parts": [{"text": TOOL_IMAGE_TEXT}, *image_parts]})


# ---------------------------------------------------------------- tools and config


def convert_tools(tools: list[JsonObject], supports_strict: bool) -> list[JsonObject]:
    """Function declarations with the full JSON Schema (``parametersJsonSchema``)."""
    declarations: list[JsonObject] = []
    for tool in tools:
        strict = resolve_strict(tool, supports_strict)
        declaration: JsonObject = {"name": tool["name"]}
        if tool.get("description") is not None:
            declaration["description"] = tool["description"]
        declaration["parametersJsonSchema"] = tool_parameters(tool, strict)
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}]


def function_calling_mode(
    tools: list[JsonObject], tool_choice: object, supports_strict: bool
) -> str | None:
    """pi-ai's ``resolveGoogleFunctionCallingMode``."""
    strict = any(resolve_strict(tool, supports_strict) is True for tool in tools)
    if tool_choice in ("none", "any"):
        return str(tool_choice).upper()
    if strict:
        return "VALIDATED"
    if not tool_choice:
        return None
    return {"auto": "AUTO"}.get(str(tool_choice), "AUTO")


def resolve_level(model: ModelSpec, level: str) -> str:
    """pi-ai's ``resolveGoogleThinkingLevel``: a model's own mapping, else the level.

    :raises WireError: the mapping names a level Google does not have.
    """
    if level == "off":
        return "high"
    mapped = (model.thinking_level_map or {}).get(level)
    resolved = mapped.lower() if isinstance(mapped, str) else level
    if resolved in GOOGLE_LEVELS:
        return resolved
    raise WireError(
        f"Unsupported Google thinking level mapping for {model.provider}/{model.id}: "
        f"{level} -> {mapped if mapped is not None else 'undefined'}"
    )


def build_body(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    thinking: GoogleThinking | None,
    disabled_config: JsonObject,
    now_ms: Callable[[], int],
) -> JsonObject:
    """The REST body ``@google/genai`` sends for pi-ai's ``buildParams``."""
    body: JsonObject = {"contents": convert_messages(model, context, now_ms)}
    # Harness instructions (the window marker) have the system's authority: further parts of
    # the system instruction, never a user turn.
    system = [context.system_prompt] if context.system_prompt else []
    system.extend(developer_texts(context.messages))
    if system:
        body["systemInstruction"] = {
            "parts": [{"text": sanitize_surrogates(text)} for text in system],
            "role": "user",
        }
    strict = supports_strict_tools(model)
    if context.tools:
        body["tools"] = convert_tools(context.tools, strict)
        mode = function_calling_mode(context.tools, options.tool_choice, strict)
        if mode is not None:
            body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    generation: JsonObject = {}
    if options.temperature is not None:
        generation["temperature"] = options.temperature
    if options.max_tokens is not None:
        generation["maxOutputTokens"] = options.max_tokens
    if thinking is not None and thinking.enabled and model.reasoning:
        config: JsonObject = {"includeThoughts": True}
        if thinking.level is not None:
            config["thinkingLevel"] = thinking.level
        elif thinking.budget_tokens is not None:
            config["thinkingBudget"] = thinking.budget_tokens
        generation["thinkingConfig"] = config
    elif model.reasoning and thinking is not None and not thinking.enabled:
        generation["thinkingConfig"] = disabled_config
    if generation:
        body["generationConfig"] = generation
    return body
