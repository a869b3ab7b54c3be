"""The Converse request body, as pi-ai 0.85 gives it to the AWS SDK's ``ConverseStream``.

Claude models get cache points after the system prompt and after the last user message
(unless caching is off; other models only with ``AWS_BEDROCK_FORCE_CACHE=1``), their
thinking settings in ``additionalModelRequestFields``, and thinking replayed with its
signature. Blobs (images, redacted reasoning) travel base64-encoded, as the SDK sends
them. Tool results of one turn go together in one user message, as Bedrock requires.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import sanitize_surrogates
from ctxmodes.providers.transport.budget import budget_level, thinking_budget
from ctxmodes.providers.transport.history import transform_messages
from ctxmodes.providers.transport.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.wire import JsonObject, WireError

EMPTY_TEXT = "<empty>"
_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_ADAPTIVE = ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5", "fable-5")
_NATIVE_XHIGH = ("opus-4-7", "opus-4-8", "opus-5", "sonnet-5", "fable-5")


def setting(name: str, env: Mapping[str, str] | None) -> str | None:
    """pi-ai's ``getProviderEnvValue``: the scoped value, else the process's."""
    import os

    return (env or {}).get(name) or os.environ.get(name) or None


def _candidates(model: ModelSpec) -> list[str]:
    values = [model.id, model.name] if model.name else [model.id]
    found = []
    for value in values:
        lower = value.lower()
        found += [lower, re.sub(r"[\s_.:]+", "-", lower)]
    return found


def is_claude(model: ModelSpec) -> bool:
    model_id, name = model.id.lower(), (model.name or "").lower()
    return (
        "anthropic.claude" in model_id
        or "anthropic/claude" in model_id
        or "anthropic.claude" in name
        or "anthropic/claude" in name
        or "claude" in name
    )


def adaptive_thinking(model: ModelSpec) -> bool:
    return any(mark in c for c in _candidates(model) for mark in _ADAPTIVE)


def prompt_caching(model: ModelSpec, env: Mapping[str, str] | None) -> bool:
    candidates = _candidates(model)
    if not any("claude" in c for c in candidates):
        return setting("AWS_BEDROCK_FORCE_CACHE", env) == "1"
    return any(
        any(mark in c for mark in ("fable-5", "opus-5", "sonnet-5", "-4-"))
        or "claude-3-7-sonnet" in c
        or "claude-3-5-haiku" in c
        for c in candidates
    )


def cache_retention(requested: str | None, env: Mapping[str, str] | None) -> str:
    if requested:
        return requested
    return "long" if setting("PI_CACHE_RETENTION", env) == "long" else "short"


def _cache_point(retention: str) -> JsonObject:
    point: JsonObject = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def _normalize_id(call_id: str, _model: ModelSpec, _source: JsonObject) -> str:
    return _NOT_ID_CHAR.sub("_", call_id)[:64]


def _text(text: str) -> JsonObject | None:
    clean = sanitize_surrogates(text)
    return {"text": clean} if clean.strip() else None


def _image(block: JsonObject) -> JsonObject:
    image_format = _IMAGE_FORMATS.get(block.get("mimeType", ""))
    if image_format is None:
        raise WireError(f"Unknown image type: {block.get('mimeType')}")
    raw = base64.b64decode(block["data"])
    return {"image": {"source": {"bytes": base64.b64encode(raw).decode()}, "format": image_format}}


def _document(value: Any) -> Any:
    """Documents lose empty keys (Bedrock rejects them)."""
    if isinstance(value, list):
        return [_document(item) for item in value]
    if isinstance(value, dict):
        return {key: _document(item) for key, item in value.items() if key}
    return value


def _tool_result(message: JsonObject) -> JsonObject:
    content: list[JsonObject] = []
    for block in message["content"]:
        if block.get("type") == "image":
            content.append(_image(block))
        elif (converted := _text(block.get("text", ""))) is not None:
            content.append(converted)
    return {
        "toolResult": {
            "toolUseId": message["toolCallId"],
            "content": content or [{"text": EMPTY_TEXT}],
            "status": "error" if message.get("isError") else "success",
        }
    }


def _assistant(model: ModelSpec, message: JsonObject) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            if (converted := _text(block["text"])) is not None:
                blocks.append(converted)
        elif kind == "toolCall":
            blocks.append(
                {
                    "toolUse": {
                        "toolUseId": block["id"],
                        "name": block["name"],
                        "input": _document(block.get("arguments")),
                    }
                }
            )
        elif kind == "thinking":
            if block.get("redacted"):
                try:
                    raw = base64.b64decode(block.get("thinkingSignature") or "", validate=True)
                except (binascii.Error, ValueError):
                    raw = b""
                if raw:
                    blocks.append({"reasoningContent": {"redactedContent": _b64(raw)}})
                continue
            thinking = sanitize_surrogates(block["thinking"])
            if not thinking.strip():
                continue
            signature = block.get("thinkingSignature") or ""
            if not is_claude(model):
                blocks.append({"reasoningContent": {"reasoningText": {"text": thinking}}})
            elif not signature.strip():
                blocks.append({"text": thinking})
            else:
                reasoning = {"text": thinking, "signature": signature}
                blocks.append({"reasoningContent": {"reasoningText": reasoning}})
    return blocks


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def convert_messages(
    model: ModelSpec,
    messages: list[JsonObject],
    retention: str,
    env: Mapping[str, str] | None,
    now_ms: Any,
) -> list[JsonObject]:
    """pi-ai's ``convertMessages`` (developer messages are left to :func:`system_blocks`)."""
    history = transform_messages(messages, model, _normalize_id, now_ms)
    result: list[JsonObject] = []
    index = 0
    while index < len(history):
        message = history[index]
        role = message.get("role")
        if role == "user":
            content = message["content"]
            blocks: list[JsonObject] = []
            if isinstance(content, str):
                blocks.append(_text(content) or {"text": EMPTY_TEXT})
            else:
                for block in content:
                    if block.get("type") == "text":
                        if (converted := _text(block["text"])) is not None:
                            blocks.append(converted)
                    elif block.get("type") == "image":
                        blocks.append(_image(block))
                blocks = blocks or [{"text": EMPTY_TEXT}]
            result.append({"role": "user", "content": blocks})
        elif role == "encryptedToolOutput":
            raise WireError("Encrypted tool output requires the Codex transport")
        elif role == "assistant":
            if message["content"]:
                converted_blocks = _assistant(model, message)
                if converted_blocks:
                    result.append({"role": "assistant", "content": converted_blocks})
        elif role == "toolResult":
            results = [_tool_result(message)]
            while index + 1 < len(history) and history[index + 1].get("role") == "toolResult":
                index += 1
                results.append(_tool_result(history[index]))
            result.append({"role": "user", "content": results})
        index += 1
    if retention != "none" and prompt_caching(model, env) and result:
        last = result[-1]
        if last["role"] == "user":
            last["content"].append(_cache_point(retention))
    return result


def system_blocks(
    system_prompt: str | None,
    messages: list[JsonObject],
    model: ModelSpec,
    retention: str,
    env: Mapping[str, str] | None,
) -> list[JsonObject] | None:
    """Pi's system prompt (with its cache point), then the texts of ctxmodes' developer
    messages (its modes' harness instructions; Pi has none). Converse has no developer
    role and takes system text only here, so they go as system blocks: the highest
    authority this wire has, where nothing a model or a tool writes ever goes; after the
    cache point, so the cached prefix stays Pi's."""
    blocks: list[JsonObject] = []
    if system_prompt:
        blocks.append({"text": sanitize_surrogates(system_prompt)})
        if retention != "none" and prompt_caching(model, env):
            blocks.append(_cache_point(retention))
    for message in messages:
        if message.get("role") == "developer":
            text = "\n".join(block.get("text", "") for block in message.get("content") or [])
            if text.strip():
                blocks.append({"text": sanitize_surrogates(text)})
    return blocks or None


def tool_config(
    tools: list[JsonObject], tool_choice: Any, supports_strict: bool
) -> JsonObject | None:
    if not tools or tool_choice == "none":
        return None
    specs = []
    for tool in tools:
        strict = resolve_strict(tool, supports_strict)
        spec: JsonObject = {
            "name": tool["name"],
            "description": tool.get("description"),
            "inputSchema": {"json": tool_parameters(tool, strict)},
        }
        if strict is True:
            spec["strict"] = True
        specs.append({"toolSpec": spec})
    config: JsonObject = {"tools": specs}
    if tool_choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif tool_choice == "any":
        config["toolChoice"] = {"any": {}}
    elif isinstance(tool_choice, dict) and tool_choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": tool_choice["name"]}}
    return config


def _effort(model: ModelSpec, level: str) -> str:
    if level == "xhigh" and any(mark in c for c in _candidates(model) for mark in _NATIVE_XHIGH):
        return "xhigh"
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def _gov_cloud(model: ModelSpec, region: str | None) -> bool:
    if region and region.lower().startswith("us-gov-"):
        return True
    model_id = model.id.lower()
    return model_id.startswith(("us-gov.", "arn:aws-us-gov:"))


def additional_fields(
    model: ModelSpec,
    level: str | None,
    budgets: Mapping[str, int],
    configured_region: str | None,
) -> JsonObject | None:
    """Claude's thinking settings (adaptive with an effort, else a token budget)."""
    if not level or not model.reasoning or not is_claude(model):
        return None
    display = None if _gov_cloud(model, configured_region) else "summarized"
    thinking: JsonObject
    fields: JsonObject
    if adaptive_thinking(model):
        thinking = {"type": "adaptive"}
        if display is not None:
            thinking["display"] = display
        return {"thinking": thinking, "output_config": {"effort": _effort(model, level)}}
    budget = budgets.get(budget_level(level), thinking_budget(level, None))
    thinking = {"type": "enabled", "budget_tokens": budget}
    if display is not None:
        thinking["display"] = display
    fields = {"thinking": thinking, "anthropic_beta": ["interleaved-thinking-2025-05-14"]}
    return fields
