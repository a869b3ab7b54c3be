"""The Mistral Chat Completions request, as pi-ai 0.85's ``mistral-conversations`` builds it.

Pi builds the payload in the Mistral SDK's camelCase and renames the fields to the wire's
snake_case before sending; a renamed field moves to the end of its object, so the body's
key order here is the one Pi sends. Tool-call ids must be nine letters or digits on this
wire: foreign ids are replaced by a short hash, the same in calls and results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import sanitize_surrogates, short_hash, stringify
from ctxmodes.providers.transport.options import cache_retention
from ctxmodes.providers.transport.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.wire import JsonObject, StreamOptions, WireError

TOOL_CALL_ID_LENGTH = 9
_NOT_ALPHANUMERIC = re.compile(r"[^a-zA-Z0-9]")
#: The models that take ``reasoning_effort``; Pi sends ``prompt_mode`` to the other
#: reasoning models.
REASONING_EFFORT_MODELS = frozenset(
    {"mistral-small-2603", "mistral-small-latest", "mistral-medium-3.5"}
)
#: Mistral SDK names → wire names, in the order Pi renames them.
_WIRE_NAMES = (
    ("topP", "top_p"),
    ("maxTokens", "max_tokens"),
    ("randomSeed", "random_seed"),
    ("responseFormat", "response_format"),
    ("toolChoice", "tool_choice"),
    ("presencePenalty", "presence_penalty"),
    ("frequencyPenalty", "frequency_penalty"),
    ("parallelToolCalls", "parallel_tool_calls"),
    ("reasoningEffort", "reasoning_effort"),
    ("promptMode", "prompt_mode"),
    ("promptCacheKey", "prompt_cache_key"),
    ("safePrompt", "safe_prompt"),
)


def derive_tool_call_id(call_id: str, attempt: int) -> str:
    """pi-ai's ``deriveMistralToolCallId``."""
    normalized = _NOT_ALPHANUMERIC.sub("", call_id)
    if attempt == 0 and len(normalized) == TOOL_CALL_ID_LENGTH:
        return normalized
    seed_base = normalized or call_id
    seed = seed_base if attempt == 0 else f"{seed_base}:{attempt}"
    return _NOT_ALPHANUMERIC.sub("", short_hash(seed))[:TOOL_CALL_ID_LENGTH]


def tool_call_id_normalizer() -> Callable[[str, ModelSpec, JsonObject], str]:
    """A normalizer for one request: each id gets one nine-character id, never another's."""
    forward: dict[str, str] = {}
    owners: dict[str, str] = {}

    def normalize(call_id: str, _model: ModelSpec, _source: JsonObject) -> str:
        if call_id in forward:
            return forward[call_id]
        attempt = 0
        while True:
            candidate = derive_tool_call_id(call_id, attempt)
            owner = owners.get(candidate)
            if owner is None or owner == call_id:
                forward[call_id] = candidate
                owners[candidate] = call_id
                return candidate
            attempt += 1

    return normalize


def uses_reasoning_effort(model: ModelSpec) -> bool:
    return model.id in REASONING_EFFORT_MODELS


def prompt_caching(options: StreamOptions) -> bool:
    return cache_retention(options) != "none" and bool(options.session_id)


def _image_chunk(block: JsonObject) -> JsonObject:
    return {"type": "image_url", "image_url": f"data:{block['mimeType']};base64,{block['data']}"}


def _tool_result_text(text: str, has_images: bool, images: bool, is_error: bool) -> str:
    trimmed = text.strip()
    prefix = "[tool error] " if is_error else ""
    if trimmed:
        suffix = (
            "\n[tool image omitted: model does not support images]"
            if has_images and not images
            else ""
        )
        return f"{prefix}{trimmed}{suffix}"
    if has_images:
        if images:
            return f"{prefix}(see attached image)"
        return f"{prefix}(image omitted: model does not support images)"
    return f"{prefix}(no tool output)"


def _assistant(message: JsonObject) -> JsonObject | None:
    parts: list[JsonObject] = []
    calls: list[JsonObject] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            if block["text"].strip():
                parts.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            if block["thinking"].strip():
                thinking = [{"type": "text", "text": sanitize_surrogates(block["thinking"])}]
                parts.append({"type": "thinking", "thinking": thinking})
        else:
            function = {"name": block["name"], "arguments": stringify(block.get("arguments") or {})}
            calls.append({"id": block["id"], "type": "function", "function": function, "index": 0})
    if not parts and not calls:
        return None
    converted: JsonObject = {"role": "assistant", "prefix": False}
    if parts:
        converted["content"] = parts
    if calls:
        converted["tool_calls"] = calls
    return converted


def convert_messages(messages: list[JsonObject], images: bool) -> list[JsonObject]:
    """pi-ai's ``toChatMessages``, already in wire names; developer messages are left to
    :func:`harness_text` (Mistral refuses a ``system`` message after an assistant turn)."""
    result: list[JsonObject] = []
    for message in messages:
        role = message.get("role")
        content: Any = message.get("content") or []
        if role == "user":
            if isinstance(content, str):
                result.append({"role": "user", "content": sanitize_surrogates(content)})
                continue
            had_images = any(block.get("type") == "image" for block in content)
            chunks = [
                {"type": "text", "text": sanitize_surrogates(block["text"])}
                if block.get("type") == "text"
                else _image_chunk(block)
                for block in content
                if block.get("type") == "text" or images
            ]
            if chunks:
                result.append({"role": "user", "content": chunks})
            elif had_images and not images:
                text = "(image omitted: model does not support images)"
                result.append({"role": "user", "content": text})
        elif role == "developer":
            continue
        elif role == "encryptedToolOutput":
            raise WireError("Encrypted tool output requires the Codex transport")
        elif role == "assistant":
            converted = _assistant(message)
            if converted is not None:
                result.append(converted)
        else:
            text = "\n".join(
                sanitize_surrogates(part["text"]) for part in content if part.get("type") == "text"
            )
            has_images = any(part.get("type") == "image" for part in content)
            chunks = [
                {
                    "type": "text",
                    "text": _tool_result_text(
                        text, has_images, images, bool(message.get("isError"))
                    ),
                }
            ]
            if images:
                chunks += [_image_chunk(part) for part in content if part.get("type") == "image"]
            result.append(
                {
                    "role": "tool",
                    "name": message.get("toolName"),
                    "content": chunks,
                    "tool_call_id": message["toolCallId"],
                }
            )
    return result


def harness_text(messages: list[JsonObject]) -> list[str]:
    """The texts of ctxmodes' developer messages (its modes' harness instructions; Pi has
    none), in order. Mistral has no developer role and accepts ``system`` only before the
    conversation, so they join the system message: the highest authority this wire has,
    and nothing a model or a tool writes ever goes there."""
    return [
        "\n".join(block.get("text", "") for block in message.get("content") or [])
        for message in messages
        if message.get("role") == "developer"
    ]


def convert_tools(tools: list[JsonObject]) -> list[JsonObject]:
    converted = []
    for tool in tools:
        strict = resolve_strict(tool, True)
        converted.append(
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description"),
                    "parameters": tool_parameters(tool, strict),
                    "strict": strict or False,
                },
            }
        )
    return converted


def _tool_choice(choice: Any) -> Any:
    if choice in ("auto", "none", "any", "required"):
        return choice
    return {"type": "function", "function": {"name": choice["function"]["name"]}}


def build_body(
    model: ModelSpec,
    system_prompt: str | None,
    messages: list[JsonObject],
    tools: list[JsonObject],
    options: StreamOptions,
    effort: str | None,
) -> JsonObject:
    """The request body, keys in the order Pi sends them."""
    wire_messages = convert_messages(messages, model.images)
    system = "\n\n".join(text for text in (system_prompt, *harness_text(messages)) if text)
    if system:
        wire_messages.insert(0, {"role": "system", "content": sanitize_surrogates(system)})
    payload: JsonObject = {"model": model.id, "stream": True, "messages": wire_messages}
    if tools:
        payload["tools"] = convert_tools(tools)
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    if options.max_tokens is not None:
        payload["maxTokens"] = options.max_tokens
    if options.tool_choice:
        payload["toolChoice"] = _tool_choice(options.tool_choice)
    if model.reasoning and effort is not None:
        if uses_reasoning_effort(model):
            levels = model.thinking_level_map or {}
            payload["reasoningEffort"] = levels.get(effort) or "high"
        else:
            payload["promptMode"] = "reasoning"
    if prompt_caching(options):
        payload["promptCacheKey"] = options.session_id
    for source, target in _WIRE_NAMES:
        if source in payload:
            payload[target] = payload.pop(source)
    return payload


def build_headers(
    model: ModelSpec, options: StreamOptions, api_key: str, user_agent: str
) -> dict[str, str]:
    """Pi's headers (lower-case, as its ``Headers`` object sends them); a ``None`` override
    removes one; ``x-affinity`` carries the session unless caching is off or it is set."""
    headers: dict[str, str] = {
        "user-agent": user_agent,
        "accept": "text/event-stream",
        "authorization": f"Bearer {api_key}",
        "content-type": "application/json",
    }
    explicit_affinity = False
    for overrides in (model.headers or {}, options.headers):
        for name, value in overrides.items():
            if name.lower() == "x-affinity":
                explicit_affinity = True
            if value is None:
                headers.pop(name.lower(), None)
            else:
                headers[name.lower()] = value
    if prompt_caching(options) and not explicit_affinity and options.session_id:
        headers["x-affinity"] = options.session_id
    return headers


def chat_url(base_url: str) -> str:
    """``<base>/v1/chat/completions`` (the base's query dropped, as ``new URL`` does)."""
    import urllib.parse

    parts = urllib.parse.urlsplit(base_url)
    path = parts.path.rstrip("/") + "/v1/chat/completions"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
