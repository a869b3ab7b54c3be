"""The Chat Completions request: Pi's context as ``messages``, its tools, thinking and cache
settings (pi-ai 0.85's ``convertMessages`` and ``buildParams``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson

from ctxmodes.providers.apis.openai_completions.compat import Compat
from ctxmodes.providers.apis.openai_completions.stream import REASONING_FIELDS, is_reasoning_detail
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import (
    sanitize_surrogates,
    short_hash,
    stringify,
)
from ctxmodes.providers.transport.budget import answer_room, thinking_budget
from ctxmodes.providers.transport.history import transform_messages
from ctxmodes.providers.transport.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.wire import ENCRYPTED_OUTPUT_REFUSED, JsonObject, WireError

BRIDGE_TEXT = "I have processed the tool results."
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"


def _safe_id_part(text: str) -> str:
    return "".join(
        char if char.isascii() and (char.isalnum() or char in "_-") else "_" for char in text
    )


def normalize_tool_call_id(model: ModelSpec) -> Callable[[str, ModelSpec, JsonObject], str]:
    """Responses-style ``call|item`` ids become ``call_item`` (at most 40 characters)."""

    def normalize(call_id: str, _target: ModelSpec, _source: JsonObject) -> str:
        if "|" in call_id:
            call, _, item = call_id.partition("|")
            call, item = _safe_id_part(call), _safe_id_part(item)
            combined = f"{call}_{item}" if item else call
            if len(combined) <= 40:
                return combined
            digest = short_hash(call_id)[:8]
            return f"{call[: max(1, 40 - len(digest) - 1)]}_{digest}"
        if model.provider == "openai":
            return call_id[:40]
        return call_id

    return normalize


def _image_part(block: JsonObject) -> JsonObject:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"},
    }


def _reasoning_details(signature: str | None) -> list[Any] | None:
    if not signature:
        return None
    try:
        parsed = orjson.loads(signature)
    except ValueError:
        return None
    if isinstance(parsed, list) and parsed and all(is_reasoning_detail(item) for item in parsed):
        return parsed
    return None


def _legacy_encrypted_detail(signature: str | None) -> Any:
    if not signature:
        return None
    try:
        parsed = orjson.loads(signature)
    except ValueError:
        return None
    if (
        is_reasoning_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and isinstance(parsed.get("id"), str)
        and parsed["id"]
        and parsed["data"]
    ):
        return parsed
    return None


def _assistant_message(model: ModelSpec, message: JsonObject, compat: Compat) -> JsonObject | None:
    converted: JsonObject = {
        "role": "assistant",
        "content": "" if compat["requiresAssistantAfterToolResult"] else None,
    }
    blocks = message["content"]
    texts = [
        sanitize_surrogates(block["text"])
        for block in blocks
        if block.get("type") == "text" and block["text"].strip()
    ]
    text = "".join(texts)
    thinking = [block for block in blocks if block.get("type") == "thinking"]
    calls = [block for block in blocks if block.get("type") == "toolCall"]
    details = next(
        (
            found
            for found in (_reasoning_details(block.get("thinkingSignature")) for block in thinking)
            if found is not None
        ),
        None,
    )
    if details is None:
        legacy = [
            found
            for found in (_legacy_encrypted_detail(call.get("thoughtSignature")) for call in calls)
            if found is not None
        ]
        details = legacy or None
    spoken = [block for block in thinking if block["thinking"].strip()]
    if spoken and compat["requiresThinkingAsText"]:
        thought = "\n\n".join(sanitize_surrogates(block["thinking"]) for block in spoken)
        converted["content"] = [
            {"type": "text", "text": thought},
            *({"type": "text", "text": part} for part in texts),
        ]
    else:
        if text:
            converted["content"] = text
        if spoken and details is None:
            signature = spoken[0].get("thinkingSignature")
            if model.provider == "opencode-go" and signature == "reasoning":
                signature = "reasoning_content"
            if signature in REASONING_FIELDS:
                converted[signature] = "\n".join(block["thinking"] for block in spoken)
    if calls:
        converted["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": stringify(call["arguments"])},
            }
            for call in calls
        ]
    if details is not None:
        converted["reasoning_details"] = details
    if (
        compat["requiresReasoningContentOnAssistantMessages"]
        and model.reasoning
        and "reasoning_content" not in converted
    ):
        converted["reasoning_content"] = ""
    content = converted["content"]
    if not content and "tool_calls" not in converted:
        return None
    return converted


def convert_messages(
    model: ModelSpec,
    system_prompt: str | None,
    messages: list[JsonObject],
    compat: Compat,
    now_ms: Callable[[], int],
) -> list[JsonObject]:
    """Pi's context as Chat Completions ``messages``."""
    history = transform_messages(messages, model, normalize_tool_call_id(model), now_ms)
    params: list[JsonObject] = []
    if system_prompt:
        system = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
        params.append({"role": system, "content": sanitize_surrogates(system_prompt)})
    last_role: str | None = None
    index = 0
    while index < len(history):
        message = history[index]
        role = message.get("role")
        if (
            compat["requiresAssistantAfterToolResult"]
            and last_role == "toolResult"
            and role == "user"
        ):
            params.append({"role": "assistant", "content": BRIDGE_TEXT})
        if role == "user":
            content = message["content"]
            if isinstance(content, str):
                params.append({"role": "user", "content": sanitize_surrogates(content)})
            elif content:
                params.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": sanitize_surrogates(part["text"])}
                            if part.get("type") == "text"
                            else _image_part(part)
                            for part in content
                        ],
                    }
                )
        elif role == "developer":
            # Harness instructions (ctxmodes' modes); Pi has no such message. A server
            # without the role gets them as system text, never as user text.
            text = "\n".join(block.get("text", "") for block in message["content"])
            role_name = "developer" if compat["supportsDeveloperRole"] else "system"
            params.append({"role": role_name, "content": sanitize_surrogates(text)})
        elif role == "encryptedToolOutput":
            # Ciphertext only the Codex backend reads; never sent anywhere else as text.
            raise WireError(ENCRYPTED_OUTPUT_REFUSED)
        elif role == "assistant":
            converted = _assistant_message(model, message, compat)
            if converted is not None:
                params.append(converted)
        elif role == "toolResult":
            images: list[JsonObject] = []
            while index < len(history) and history[index].get("role") == "toolResult":
                result = history[index]
                text = "\n".join(
                    part["text"] for part in result["content"] if part.get("type") == "text"
                )
                has_images = any(part.get("type") == "image" for part in result["content"])
                shown = text or ("(see attached image)" if has_images else "(no tool output)")
                tool: JsonObject = {
                    "role": "tool",
                    "content": sanitize_surrogates(shown),
                    "tool_call_id": result["toolCallId"],
                }
                if compat["requiresToolResultName"] and result.get("toolName"):
                    tool["name"] = result["toolName"]
                params.append(tool)
                if has_images and model.images:
                    images.extend(
                        _image_part(part)
                        for part in result["content"]
                        if part.get("type") == "image"
                    )
                index += 1
            if images:
                if compat["requiresAssistantAfterToolResult"]:
                    params.append({"role": "assistant", "content": BRIDGE_TEXT})
                params.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images],
                    }
                )
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = role
        index += 1
    return params


def convert_tools(tools: list[JsonObject], compat: Compat) -> list[JsonObject]:
    """Plain function tools, strict where a tool asks for it and the server has strict mode
    (:mod:`~ctxmodes.providers.transport.strict_schema`); a namespace's tools are offered as plain
    functions."""
    supports_strict = compat["supportsStrictMode"] is not False
    converted = []
    for tool in _flatten(tools):
        strict = resolve_strict(tool, supports_strict)
        function: JsonObject = {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool_parameters(tool, strict),
        }
        if supports_strict:
            function["strict"] = bool(strict)
        converted.append({"type": "function", "function": function})
    return converted


def _flatten(tools: list[JsonObject]) -> Iterator[JsonObject]:
    for tool in tools:
        if "tools" in tool:
            yield from tool["tools"]
        else:
            yield tool


def _has_tool_history(messages: list[JsonObject]) -> bool:
    return any(
        message.get("role") == "toolResult"
        or (
            message.get("role") == "assistant"
            and any(block.get("type") == "toolCall" for block in message.get("content") or ())
        )
        for message in messages
    )


def _mapped(model: ModelSpec, level: str | None) -> Any:
    """``thinkingLevelMap[level]`` (``...`` when the map does not name it)."""
    levels = model.thinking_level_map or {}
    return levels.get(level or "off", ...)


def _thinking_budget(
    model: ModelSpec, effort: str | None, ceiling: int, custom: Mapping[str, int] | None
) -> int | None:
    if not effort or not model.reasoning:
        return None
    budget = answer_room(thinking_budget(effort, custom), ceiling)
    return budget if budget > 0 else None


def _template_values(
    model: ModelSpec, effort: str | None, values: JsonObject, budget: int | None
) -> JsonObject | None:
    resolved: JsonObject = {}
    for key, value in values.items():
        if not isinstance(value, dict):
            resolved[key] = value
            continue
        if not effort and value.get("omitWhenOff"):
            continue
        if value.get("$var") == "thinking.enabled":
            resolved[key] = bool(effort)
        elif value.get("$var") == "thinking.budget":
            if budget is not None:
                resolved[key] = budget
        else:
            mapped = _mapped(model, effort)
            if mapped is ...:
                if effort is not None:
                    resolved[key] = effort
            elif isinstance(mapped, str):
                resolved[key] = mapped
    return resolved or None


def _apply_thinking(
    body: JsonObject,
    model: ModelSpec,
    compat: Compat,
    effort: str | None,
    thinking_budgets: Mapping[str, int] | None,
) -> None:
    fmt = compat["thinkingFormat"]
    supports_effort = compat["supportsReasoningEffort"]
    mapped = _mapped(model, effort) if effort else ...
    named = effort if mapped is ... or mapped is None else mapped
    off = _mapped(model, "off")
    ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or model.max_tokens
    budget = _thinking_budget(model, effort, ceiling, thinking_budgets)
    if not model.reasoning:
        pass
    elif fmt == "zai":
        body["thinking"] = (
            {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        )
        if effort and supports_effort:
            value = effort if mapped is ... else mapped
            if isinstance(value, str):
                body["reasoning_effort"] = value
    elif fmt == "qwen":
        body["enable_thinking"] = bool(effort)
        if effort and supports_effort and isinstance(named, str):
            body["reasoning_effort"] = named
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt == "chat-template":
        values = _template_values(model, effort, compat["chatTemplateKwargs"], budget)
        if values:
            body["chat_template_kwargs"] = values
    elif fmt == "baseten":
        values = _template_values(model, effort, compat["chatTemplateArgs"], budget)
        if values:
            body["chat_template_args"] = values
        if supports_effort:
            value = _mapped(model, effort) if effort else off
            chosen = effort if value is ... else value
            if isinstance(chosen, str):
                body["reasoning_effort"] = chosen
    elif fmt == "deepseek":
        if effort:
            body["thinking"] = {"type": "enabled"}
        elif off is not None:
            body["thinking"] = {"type": "disabled"}
        if effort and supports_effort:
            body["reasoning_effort"] = named
    elif fmt == "openrouter":
        if effort:
            body["reasoning"] = {"effort": named}
        elif off is not None:
            body["reasoning"] = {"effort": "none" if off is ... else off}
    elif fmt == "ant-ling":
        if effort and isinstance(mapped, str):
            body["reasoning"] = {"effort": mapped}
    elif fmt == "together":
        body["reasoning"] = {"enabled": bool(effort)}
        if effort and supports_effort:
            body["reasoning_effort"] = named
    elif fmt == "string-thinking":
        if effort:
            body["thinking"] = named
        elif off is not None:
            body["thinking"] = "none" if off is ... else off
    elif supports_effort:
        if effort:
            body["reasoning_effort"] = named
        elif isinstance(off, str):
            body["reasoning_effort"] = off
    field = compat["thinkingTokenBudgetField"] or (
        "thinking_token_budget" if compat["supportsThinkingTokenBudget"] else None
    )
    if field and budget is not None:
        body[field] = budget


def _cache_control(compat: Compat, retention: str) -> JsonObject | None:
    if compat["cacheControlFormat"] != "anthropic" or retention == "none":
        return None
    long = retention == "long" and compat["supportsLongCacheRetention"]
    return {"type": "ephemeral", **({"ttl": "1h"} if long else {})}


def _mark_text(message: JsonObject, control: JsonObject) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": control}]
        return True
    if isinstance(content, list):
        for part in reversed(content):
            if isinstance(part, dict) and part.get("type") == "text":
                part["cache_control"] = control
                return True
    return False


def _apply_cache_control(body: JsonObject, control: JsonObject) -> None:
    messages = body["messages"]
    for message in messages:
        if message["role"] in ("system", "developer"):
            _mark_text(message, control)
            break
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = control
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, control):
            break


def build_body(
    model: ModelSpec,
    system_prompt: str | None,
    messages: list[JsonObject],
    tools: list[JsonObject],
    *,
    compat: Compat,
    retention: str,
    session_id: str | None,
    max_tokens: int | None,
    temperature: float | None,
    tool_choice: Any,
    effort: str | None,
    thinking_budgets: Mapping[str, int] | None = None,
    sampling_params: JsonObject | None,
    now_ms: Callable[[], int],
) -> JsonObject:
    """pi-ai's ``buildParams``, keys in the same order."""
    long_cache = retention == "long" and compat["supportsLongCacheRetention"]
    body: JsonObject = {
        "model": model.id,
        "messages": convert_messages(model, system_prompt, messages, compat, now_ms),
        "stream": True,
    }
    if session_id is not None and (
        ("api.openai.com" in model.base_url and retention != "none") or long_cache
    ):
        body["prompt_cache_key"] = session_id[:64]
    if long_cache:
        body["prompt_cache_retention"] = "24h"
    if compat["supportsUsageInStreaming"] is not False:
        body["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        body["store"] = False
    if max_tokens:
        field = (
            "max_tokens" if compat["maxTokensField"] == "max_tokens" else "max_completion_tokens"
        )
        body[field] = max_tokens
    if temperature is not None:
        body["temperature"] = temperature
    if tools:
        body["tools"] = convert_tools(tools, compat)
        if compat["zaiToolStream"]:
            body["tool_stream"] = True
    elif _has_tool_history(messages):
        body["tools"] = []
    control = _cache_control(compat, retention)
    if control is not None:
        _apply_cache_control(body, control)
    if tool_choice:
        body["tool_choice"] = tool_choice
    if compat["vllmPriority"] is not None:
        body["priority"] = compat["vllmPriority"]
    _apply_thinking(body, model, compat, effort, thinking_budgets)
    routing = model.flag("openRouterRouting")
    if routing:
        body["provider"] = routing
    gateway = model.flag("vercelGatewayRouting") or {}
    if gateway.get("only") or gateway.get("order"):
        body["providerOptions"] = {
            "gateway": {key: gateway[key] for key in ("only", "order") if gateway.get(key)}
        }
    if sampling_params:
        body.update(sampling_params)
    return body
