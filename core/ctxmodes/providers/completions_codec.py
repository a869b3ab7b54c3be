"""The Chat Completions wire format: Pi's context as ``messages``, and chunks back into an
assistant message (pi-ai 0.85's ``convertMessages``, ``buildParams`` and stream loop).

Pi's shapes are kept exactly, with one deliberate difference: a ``delta.content`` that is an
array of typed parts (Mistral's thinking parts) is read as the text of its parts, where Pi
appends the array itself to a string and stores ``[object Object]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import (
    parse_streaming_json,
    sanitize_surrogates,
    short_hash,
    stringify,
)
from ctxmodes.providers.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.transform import transform_messages
from ctxmodes.providers.wire import ArgumentBuffer, Emit, WireError, WireEvent, calculate_cost

#: The fields a server may stream thinking in, in the order Pi prefers them.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
BRIDGE_TEXT = "I have processed the tool results."
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
DEFAULT_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_ANSWER_TOKENS = 1024


# ---------------------------------------------------------------- request


def _safe_id_part(text: str) -> str:
    return "".join(
        char if char.isascii() and (char.isalnum() or char in "_-") else "_" for char in text
    )


def normalize_tool_call_id(model: ModelSpec) -> Callable[[str, ModelSpec, dict[str, Any]], str]:
    """Responses-style ``call|item`` ids become ``call_item`` (at most 40 characters)."""

    def normalize(call_id: str, _target: ModelSpec, _source: dict[str, Any]) -> str:
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


def _image_part(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"},
    }


def _reasoning_details(signature: str | None) -> list[Any] | None:
    if not signature:
        return None
    try:
        import orjson

        parsed = orjson.loads(signature)
    except ValueError:
        return None
    if isinstance(parsed, list) and parsed and all(_is_reasoning_detail(item) for item in parsed):
        return parsed
    return None


def _legacy_encrypted_detail(signature: str | None) -> Any:
    if not signature:
        return None
    try:
        import orjson

        parsed = orjson.loads(signature)
    except ValueError:
        return None
    if (
        _is_reasoning_detail(parsed)
        and parsed["type"] == "reasoning.encrypted"
        and isinstance(parsed.get("id"), str)
        and parsed["id"]
        and parsed["data"]
    ):
        return parsed
    return None


def _is_reasoning_detail(detail: Any) -> bool:
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


def _assistant_message(
    model: ModelSpec, message: dict[str, Any], compat: dict[str, Any]
) -> dict[str, Any] | None:
    converted: dict[str, Any] = {
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
    messages: list[dict[str, Any]],
    compat: dict[str, Any],
    now_ms: Callable[[], int],
) -> list[dict[str, Any]]:
    """Pi's context as Chat Completions ``messages``."""
    history = transform_messages(messages, model, normalize_tool_call_id(model), now_ms)
    params: list[dict[str, Any]] = []
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
            raise WireError("Encrypted tool output requires the Codex transport")
        elif role == "assistant":
            converted = _assistant_message(model, message, compat)
            if converted is not None:
                params.append(converted)
        elif role == "toolResult":
            images: list[dict[str, Any]] = []
            while index < len(history) and history[index].get("role") == "toolResult":
                result = history[index]
                text = "\n".join(
                    part["text"] for part in result["content"] if part.get("type") == "text"
                )
                has_images = any(part.get("type") == "image" for part in result["content"])
                shown = text or ("(see attached image)" if has_images else "(no tool output)")
                tool: dict[str, Any] = {
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


def convert_tools(tools: list[dict[str, Any]], compat: dict[str, Any]) -> list[dict[str, Any]]:
    """Plain function tools, strict where a tool asks for it and the server has strict mode
    (:mod:`~ctxmodes.providers.strict_schema`); a namespace's tools are offered as plain
    functions."""
    supports_strict = compat["supportsStrictMode"] is not False
    converted = []
    for tool in _flatten(tools):
        strict = resolve_strict(tool, supports_strict)
        function: dict[str, Any] = {
            "name": tool["name"],
            "description": tool["description"],
            "parameters": tool_parameters(tool, strict),
        }
        if supports_strict:
            function["strict"] = bool(strict)
        converted.append({"type": "function", "function": function})
    return converted


def _flatten(tools: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for tool in tools:
        if "tools" in tool:
            yield from tool["tools"]
        else:
            yield tool


def _has_tool_history(messages: list[dict[str, Any]]) -> bool:
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


def _thinking_budget(model: ModelSpec, effort: str | None, ceiling: int) -> int | None:
    if not effort or not model.reasoning:
        return None
    level = "high" if effort in ("xhigh", "max") else effort
    budget = min(DEFAULT_THINKING_BUDGETS.get(level, 0), max(0, ceiling - MIN_ANSWER_TOKENS))
    return budget if budget > 0 else None


def _template_values(
    model: ModelSpec, effort: str | None, values: dict[str, Any], budget: int | None
) -> dict[str, Any] | None:
    resolved: dict[str, Any] = {}
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
    body: dict[str, Any], model: ModelSpec, compat: dict[str, Any], effort: str | None
) -> None:
    fmt = compat["thinkingFormat"]
    supports_effort = compat["supportsReasoningEffort"]
    mapped = _mapped(model, effort) if effort else ...
    named = effort if mapped is ... or mapped is None else mapped
    off = _mapped(model, "off")
    ceiling = body.get("max_tokens") or body.get("max_completion_tokens") or model.max_tokens
    budget = _thinking_budget(model, effort, ceiling)
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


def _cache_control(compat: dict[str, Any], retention: str) -> dict[str, Any] | None:
    if compat["cacheControlFormat"] != "anthropic" or retention == "none":
        return None
    long = retention == "long" and compat["supportsLongCacheRetention"]
    return {"type": "ephemeral", **({"ttl": "1h"} if long else {})}


def _mark_text(message: dict[str, Any], control: dict[str, Any]) -> bool:
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


def _apply_cache_control(body: dict[str, Any], control: dict[str, Any]) -> None:
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
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    *,
    compat: dict[str, Any],
    retention: str,
    session_id: str | None,
    max_tokens: int | None,
    temperature: float | None,
    tool_choice: Any,
    effort: str | None,
    sampling_params: dict[str, Any] | None,
    now_ms: Callable[[], int],
) -> dict[str, Any]:
    """pi-ai's ``buildParams``, keys in the same order."""
    long_cache = retention == "long" and compat["supportsLongCacheRetention"]
    body: dict[str, Any] = {
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
    _apply_thinking(body, model, compat, effort)
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


# ---------------------------------------------------------------- response


def parse_usage(raw: dict[str, Any], model: ModelSpec) -> dict[str, Any]:
    """A usage object in Pi's shape; ``totalTokens`` is recomputed, as Pi does."""
    details = raw.get("prompt_tokens_details") or {}
    cache_read = _first_defined(
        details.get("cached_tokens"), raw.get("prompt_cache_hit_tokens"), raw.get("cached_tokens")
    )
    cache_write = details.get("cache_write_tokens") or 0
    prompt = raw.get("prompt_tokens") or 0
    output = raw.get("completion_tokens") or 0
    fresh = max(0, prompt - cache_read - cache_write)
    usage: dict[str, Any] = {
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

    def __init__(self, model: ModelSpec, output: dict[str, Any], emit: Emit) -> None:
        self._model = model
        self._output = output
        self._emit = emit
        self._blocks: list[dict[str, Any]] = output["content"]
        self._text: dict[str, Any] | None = None
        self._thinking: dict[str, Any] | None = None
        self._by_index: dict[Any, dict[str, Any]] = {}
        self._by_id: dict[str, dict[str, Any]] = {}
        self._details: list[dict[str, Any]] | None = None
        self.has_finish_reason = False

    def _index(self, block: dict[str, Any]) -> int:
        # Blocks only grow at the end and the caller's block is usually the last one.
        for position in range(len(self._blocks) - 1, -1, -1):
            if self._blocks[position] is block:
                return position
        return -1

    def _add(self, block: dict[str, Any], kind: str) -> None:
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

    def _delta(self, delta: dict[str, Any]) -> None:
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
                if _is_reasoning_detail(detail):
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

    def _thinking_block(self, signature: str | None) -> dict[str, Any]:
        if self._thinking is None:
            self._thinking = {"type": "thinking", "thinking": ""}
            if signature is not None:
                self._thinking["thinkingSignature"] = signature
            self._add(self._thinking, "thinking_start")
        return self._thinking

    def _tool_call(self, call: dict[str, Any]) -> None:
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
                self._emit(WireEvent("thinking_end", position, content=block["thinking"]))
            elif kind == "toolCall":
                block["arguments"] = parse_streaming_json(block.pop("partialArgs").text())
                self._emit(WireEvent("toolcall_end", position, tool_call=dict(block)))

    def fail(self) -> None:
        """What a failure keeps: reasoning details are still written to the signature."""
        self._apply_details()


def _append_detail(details: list[dict[str, Any]], detail: dict[str, Any]) -> None:
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


def _assign(target: dict[str, Any], key: str, source: dict[str, Any]) -> None:
    # JavaScript's ``target[key] = source[key]``: a missing value leaves no key behind.
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def _fill_common(target: dict[str, Any], source: dict[str, Any]) -> None:
    if target.get("id") is None:
        _assign(target, "id", source)
    if not target.get("format"):
        _assign(target, "format", source)
    if target.get("index") is None:
        _assign(target, "index", source)
