"""The Anthropic Messages request as pi-ai 0.85 sends it through the Anthropic SDK: headers
(an API key, or a subscription OAuth token with Claude Code's identity), the beta features,
and the body (``buildParams``, ``convertMessages``, ``convertTools``).

Details that matter: ``cache_control`` goes on the system block, the last tool and the last
block of the last user message only; tool schemas are reduced to ``type``, ``properties``
and ``required`` unless the tool is sent strict; consecutive tool results are one user
message; an OAuth request presents itself as Claude Code (its system line first, its tool
names' casing). The format has no developer role: ctxmodes' developer messages (the window
marker) become further system blocks after Pi's, never user content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import sanitize_surrogates, stringify
from ctxmodes.providers.transport.history import transform_messages
from ctxmodes.providers.transport.options import cache_retention
from ctxmodes.providers.transport.strict_schema import resolve_strict, tool_parameters
from ctxmodes.providers.wire import (
    JsonObject,
    PiContext,
    PiMessage,
    StreamOptions,
    developer_texts,
)

API_VERSION = "2023-06-01"
#: The Claude Code release an OAuth request presents itself as.
CLAUDE_CODE_VERSION = "2.1.251"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
#: Claude Code's tool names; an OAuth request sends a tool of the same name in this casing.
CLAUDE_CODE_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
)
_CLAUDE_CODE_BY_LOWER = {name.lower(): name for name in CLAUDE_CODE_TOOLS}

FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01"
MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
IMAGE_ONLY_TEXT = "(see attached image)"
EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})

_NOT_ID_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_TOOL_REFERENCE_MODEL = re.compile(r"^claude-(?:opus|sonnet|fable)-(\d+)(?:-(\d+))?(?:-|$)")


def is_oauth_token(key: str) -> bool:
    return "sk-ant-oat" in key


def claude_code_name(name: str) -> str:
    return _CLAUDE_CODE_BY_LOWER.get(name.lower(), name)


def tool_name_from_claude_code(name: str, tools: Iterable[JsonObject]) -> str:
    """The context's own name for a tool the OAuth answer names in Claude Code's casing."""
    lower = name.lower()
    return next((tool["name"] for tool in tools if tool["name"].lower() == lower), name)


@dataclass(frozen=True, slots=True)
class AnthropicCompat:
    """pi-ai's ``getAnthropicCompat``: the model's ``compat`` flags with their defaults."""

    eager_input_streaming: bool
    long_cache_retention: bool
    session_affinity_headers: bool
    cache_control_on_tools: bool
    temperature: bool
    allow_empty_signature: bool
    strict_tools: bool
    tool_references: bool
    mid_conversation_effort: bool
    adaptive_thinking: bool
    fallback_models: list[JsonObject] = field(default_factory=list)

    @classmethod
    def of(cls, model: ModelSpec) -> AnthropicCompat:
        return cls(
            eager_input_streaming=model.flag("supportsEagerToolInputStreaming", True),
            long_cache_retention=model.flag("supportsLongCacheRetention", True),
            session_affinity_headers=model.flag("sendSessionAffinityHeaders", False),
            cache_control_on_tools=model.flag("supportsCacheControlOnTools", True),
            temperature=model.flag("supportsTemperature", True),
            allow_empty_signature=model.flag("allowEmptySignature", False),
            strict_tools=model.flag("supportsStrictTools", False),
            tool_references=model.flag("supportsToolReferences", _default_tool_references(model)),
            mid_conversation_effort=model.flag("supportsMidConvoEffort", False) is True,
            adaptive_thinking=model.flag("forceAdaptiveThinking", False) is True,
            fallback_models=list(model.flag("allowedFallbackModels", None) or []),
        )


def _default_tool_references(model: ModelSpec) -> bool:
    """First-party models from Opus/Sonnet 4.5 on (not Haiku) take ``tool_reference`` blocks."""
    if model.provider != "anthropic" or "haiku" in model.id:
        return False
    found = _TOOL_REFERENCE_MODEL.match(model.id)
    if found is None:
        return False
    major = int(found.group(1))
    minor_text = found.group(2)
    minor = int(minor_text) if minor_text and len(minor_text) < 8 else 0
    return major > 4 or (major == 4 and minor >= 5)


@dataclass(frozen=True, slots=True)
class Thinking:
    """What ``streamSimple`` decided about thinking for this call."""

    enabled: bool
    effort: str | None = None
    budget_tokens: int | None = None


def cache_control(model: ModelSpec, options: StreamOptions) -> JsonObject | None:
    retention = cache_retention(options)
    if retention == "none":
        return None
    if retention == "long" and AnthropicCompat.of(model).long_cache_retention:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def normalize_tool_call_id(call_id: str, _model: ModelSpec, _source: PiMessage) -> str:
    """Anthropic's tool-use ids: ``[a-zA-Z0-9_-]``, at most 64 characters."""
    return _NOT_ID_CHAR.sub("_", call_id)[:64]


# ---------------------------------------------------------------- headers


def build_headers(
    model: ModelSpec,
    options: StreamOptions,
    api_key: str | None,
    user_agent: str,
    betas: list[str],
) -> dict[str, str]:
    """The SDK's headers: Pi's defaults, the model's and the caller's (``None`` removes one),
    then the version, the credentials and the beta features."""
    oauth = api_key is not None and is_oauth_token(api_key)
    defaults: dict[str, str | None] = {
        "User-Agent": user_agent,
        "accept": "application/json",
        "anthropic-dangerous-direct-browser-access": "true",
    }
    if oauth:
        # Claude Code's user agent replaces Pi's.
        defaults["User-Agent"] = f"claude-cli/{CLAUDE_CODE_VERSION}"
        defaults["x-app"] = "cli"
    session = options.session_id if cache_retention(options) != "none" else None
    if not oauth and session and AnthropicCompat.of(model).session_affinity_headers:
        defaults["x-session-affinity"] = session
    headers: dict[str, str] = {"anthropic-version": API_VERSION}
    if api_key and oauth:
        headers["authorization"] = f"Bearer {api_key}"
    elif api_key:
        headers["x-api-key"] = api_key
    for source in (defaults, model.headers or {}, options.headers):
        _merge(headers, source)
    headers["content-type"] = "application/json"
    if betas:
        _merge(headers, {"anthropic-beta": ",".join(betas)})
    return headers


def _merge(headers: dict[str, str], source: Mapping[str, str | None]) -> None:
    for name, value in source.items():
        for existing in [key for key in headers if key.lower() == name.lower()]:
            del headers[existing]
        if value is not None:
            headers[name] = value


def beta_features(
    model: ModelSpec, context: PiContext, options: StreamOptions, oauth: bool, thinking: Thinking
) -> list[str]:
    """pi-ai's ``getBetaFeatures``: an ``anthropic-beta`` header of the model's or the caller's
    replaces them (``None`` sends none)."""
    configured: str | None = None
    named = False
    for headers in (model.headers or {}, options.headers):
        for name, value in headers.items():
            if name.lower() == "anthropic-beta":
                configured, named = value, True
    if named:
        if configured is None:
            return []
        return list(dict.fromkeys(part.strip() for part in configured.split(",") if part.strip()))
    compat = AnthropicCompat.of(model)
    features: list[str] = []
    if oauth:
        features.extend(OAUTH_BETAS)
    if context.tools and not compat.eager_input_streaming:
        features.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if model.reasoning and thinking.enabled and not compat.adaptive_thinking:
        features.append(INTERLEAVED_THINKING_BETA)
    if compat.fallback_models:
        features.append(SERVER_SIDE_FALLBACK_BETA)
    if compat.mid_conversation_effort:
        features.extend((MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA))
    return list(dict.fromkeys(features))


def status_message(response: httpx.Response, body: str) -> str:
    """The SDK's ``APIError`` message: ``<status> <message or body JSON>``."""
    status = response.status_code
    try:
        parsed: Any = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        parsed = None
    if parsed is None:
        text = body
    elif isinstance(parsed, dict) and parsed.get("message"):
        message = parsed["message"]
        text = message if isinstance(message, str) else stringify(message)
    else:
        text = stringify(parsed)
    return f"{status} {text}" if text else f"{status} status code (no body)"


# ---------------------------------------------------------------- body


def build_body(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    *,
    oauth: bool,
    thinking: Thinking,
    now_ms: Callable[[], int],
) -> JsonObject:
    """pi-ai's ``buildParams`` (without ``betas``, which the SDK sends as a header)."""
    control = cache_control(model, options)
    compat = AnthropicCompat.of(model)
    developer = developer_texts(context.messages)
    messages = transform_messages(context.messages, model, normalize_tool_call_id, now_ms)
    rename: Callable[[str], str] = claude_code_name if oauth else _same
    immediate, deferred = _split_deferred_tools(
        context.tools, messages, compat.tool_references, rename
    )
    if not immediate and deferred:
        immediate, deferred = deferred, []
    converted, levels = _convert_messages(
        messages,
        oauth=oauth,
        control=control,
        allow_empty_signature=compat.allow_empty_signature,
        deferred={rename(tool["name"]) for tool in deferred},
        rename=rename,
        managed_provider=model.provider if compat.mid_conversation_effort else None,
    )
    if compat.mid_conversation_effort:
        converted = _with_effort_messages(converted, levels, thinking.effort or "high")
    body: JsonObject = {
        "model": model.id,
        "messages": converted,
        "max_tokens": options.max_tokens if options.max_tokens is not None else model.max_tokens,
        "stream": True,
    }
    system: list[JsonObject] = []
    if oauth:
        system.append(_text_block(CLAUDE_CODE_IDENTITY, control))
    if context.system_prompt:
        system.append(_text_block(sanitize_surrogates(context.system_prompt), control))
    # Harness instructions (the window marker) have the system's authority; after Pi's own
    # blocks and without a cache breakpoint, so Pi's breakpoints stay where Pi puts them.
    system.extend(_text_block(sanitize_surrogates(text), None) for text in developer)
    if system:
        body["system"] = system
    if (
        options.temperature is not None
        and not thinking.enabled
        and not compat.mid_conversation_effort
        and compat.temperature
    ):
        body["temperature"] = options.temperature
    if immediate or deferred:
        tool_control = control if compat.cache_control_on_tools else None
        body["tools"] = [
            *_convert_tools(immediate, oauth, compat, tool_control, deferred=False),
            *_convert_tools(deferred, oauth, compat, None, deferred=True),
        ]
    if compat.mid_conversation_effort:
        body["thinking"] = {
            "type": "adaptive",
            "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        }
        body["output_config"] = {"effort": "high"}
    elif model.reasoning:
        if thinking.enabled:
            if compat.adaptive_thinking:
                body["thinking"] = {"type": "adaptive", "display": "summarized"}
                if thinking.effort:
                    body["output_config"] = {"effort": thinking.effort}
            else:
                body["thinking"] = {
                    "type": "enabled",
                    "budget_tokens": thinking.budget_tokens or 1024,
                    "display": "summarized",
                }
        elif (model.thinking_level_map or {}).get("off", "") is not None:
            body["thinking"] = {"type": "disabled"}
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        body["metadata"] = {"user_id": user_id}
    if options.tool_choice:
        choice = options.tool_choice
        body["tool_choice"] = {"type": choice} if isinstance(choice, str) else choice
    if compat.fallback_models:
        body["fallbacks"] = [{"model": fallback["model"]} for fallback in compat.fallback_models]
    return body


def _same(name: str) -> str:
    return name


def _text_block(text: str, control: JsonObject | None) -> JsonObject:
    block: JsonObject = {"type": "text", "text": text}
    if control:
        block["cache_control"] = control
    return block


def _split_deferred_tools(
    tools: list[JsonObject],
    messages: list[PiMessage],
    enabled: bool,
    rename: Callable[[str], str],
) -> tuple[list[JsonObject], list[JsonObject]]:
    """pi-ai's ``splitDeferredTools``: tools a tool result added (and no call used yet) are
    loaded from the transcript instead of the prompt prefix."""
    unique: dict[str, JsonObject] = {}
    for tool in tools:
        unique[rename(tool["name"])] = tool
    if not enabled:
        return list(unique.values()), []
    deferred_names: set[str] = set()
    used: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant":
            used.update(
                rename(block["name"])
                for block in message["content"]
                if block.get("type") == "toolCall"
            )
        elif message.get("role") == "toolResult":
            for name in message.get("addedToolNames") or ():
                if rename(name) not in used:
                    deferred_names.add(rename(name))
    immediate = [tool for name, tool in unique.items() if name not in deferred_names]
    deferred = [tool for name, tool in unique.items() if name in deferred_names]
    return immediate, deferred


def _convert_tools(
    tools: list[JsonObject],
    oauth: bool,
    compat: AnthropicCompat,
    control: JsonObject | None,
    *,
    deferred: bool,
) -> list[JsonObject]:
    converted: list[JsonObject] = []
    for index, tool in enumerate(tools):
        strict = resolve_strict(tool, compat.strict_tools)
        parameters = tool_parameters(tool, strict)
        reduced: JsonObject = {
            "type": "object",
            "properties": parameters.get("properties") or {},
            "required": parameters.get("required") or [],
        }
        entry: JsonObject = {"name": claude_code_name(tool["name"]) if oauth else tool["name"]}
        if tool.get("description") is not None:
            entry["description"] = tool["description"]
        if compat.eager_input_streaming:
            entry["eager_input_streaming"] = True
        if strict is True:
            entry["strict"] = True
        entry["input_schema"] = {**parameters, **reduced} if strict is True else reduced
        if deferred:
            entry["defer_loading"] = True
        if control and index == len(tools) - 1:
            entry["cache_control"] = control
        converted.append(entry)
    return converted


def _content_blocks(content: list[JsonObject]) -> str | list[JsonObject]:
    """A tool result's content: its text joined by newlines, or blocks when it has images."""
    if not any(block.get("type") == "image" for block in content):
        return sanitize_surrogates("\n".join(block.get("text", "") for block in content))
    blocks = [
        {"type": "text", "text": sanitize_surrogates(block["text"])}
        if block.get("type") == "text"
        else _image(block)
        for block in content
    ]
    if not any(block["type"] == "text" for block in blocks):
        blocks.insert(0, {"type": "text", "text": IMAGE_ONLY_TEXT})
    return blocks


def _image(block: JsonObject) -> JsonObject:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": block.get("mimeType"),
            "data": block.get("data"),
        },
    }


def _user_message(message: PiMessage) -> JsonObject | None:
    content = message["content"]
    if isinstance(content, str):
        if not content.strip():
            return None
        return {"role": "user", "content": sanitize_surrogates(content)}
    blocks = [
        {"type": "text", "text": sanitize_surrogates(item["text"])}
        if item.get("type") == "text"
        else _image(item)
        for item in content
    ]
    kept = [block for block in blocks if block["type"] != "text" or block["text"].strip()]
    return {"role": "user", "content": kept} if kept else None


def _assistant_blocks(
    message: PiMessage, oauth: bool, allow_empty_signature: bool
) -> list[JsonObject]:
    blocks: list[JsonObject] = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            if block["text"].strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            if block.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": block.get("thinkingSignature")})
                continue
            signature = block.get("thinkingSignature")
            signed = bool(signature) and bool(signature.strip())
            if not block["thinking"].strip() and not signed:
                continue
            thinking = sanitize_surrogates(block["thinking"])
            if signed:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
            elif allow_empty_signature:
                blocks.append({"type": "thinking", "thinking": thinking, "signature": ""})
            else:
                blocks.append({"type": "text", "text": thinking})
        elif kind == "toolCall":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block["id"],
                    "name": claude_code_name(block["name"]) if oauth else block["name"],
                    "input": block.get("arguments") if block.get("arguments") is not None else {},
                }
            )
    return blocks


def _tool_result(
    message: PiMessage,
    oauth: bool,
    deferred: set[str],
    loaded: set[str],
    rename: Callable[[str], str],
) -> tuple[JsonObject, list[JsonObject]]:
    references: list[JsonObject] = []
    for name in message.get("addedToolNames") or ():
        normalized = rename(name)
        if normalized not in deferred or normalized in loaded:
            continue
        loaded.add(normalized)
        tool_name = claude_code_name(name) if oauth else name
        references.append({"type": "tool_reference", "tool_name": tool_name})
    content = _content_blocks(message["content"])
    result: JsonObject = {
        "type": "tool_result",
        "tool_use_id": message["toolCallId"],
        "content": references or content,
    }
    if message.get("isError") is not None:
        result["is_error"] = message["isError"]
    siblings: list[JsonObject] = []
    if references:
        siblings = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return result, siblings


def _convert_messages(
    messages: list[PiMessage],
    *,
    oauth: bool,
    control: JsonObject | None,
    allow_empty_signature: bool,
    deferred: set[str],
    rename: Callable[[str], str],
    managed_provider: str | None,
) -> tuple[list[JsonObject], dict[int, str]]:
    """pi-ai's ``convertMessages``; also the effort each replayed assistant turn ran at."""
    params: list[JsonObject] = []
    levels: dict[int, str] = {}
    loaded: set[str] = set()
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message.get("role")
        if role == "user":
            converted = _user_message(message)
            if converted is not None:
                params.append(converted)
        elif role == "assistant":
            blocks = _assistant_blocks(message, oauth, allow_empty_signature)
            if blocks:
                level = message.get("providerThinkingLevel")
                if (
                    managed_provider is not None
                    and message.get("api") == "anthropic-messages"
                    and message.get("provider") == managed_provider
                    and level in EFFORTS
                ):
                    levels[len(params)] = level
                params.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            results: list[JsonObject] = []
            siblings: list[JsonObject] = []
            while index < len(messages) and messages[index].get("role") == "toolResult":
                result, extra = _tool_result(messages[index], oauth, deferred, loaded, rename)
                results.append(result)
                siblings.extend(extra)
                index += 1
            index -= 1
            params.append({"role": "user", "content": [*results, *siblings]})
        index += 1
    if control and params and params[-1]["role"] == "user":
        last = params[-1]
        if isinstance(last["content"], list):
            block = last["content"][-1] if last["content"] else None
            if block is not None and block.get("type") in ("text", "image", "tool_result"):
                block["cache_control"] = control
        elif isinstance(last["content"], str):
            last["content"] = [_text_block(last["content"], control)]
    return params, levels


def _with_effort_messages(
    messages: list[JsonObject], levels: dict[int, str], active: str
) -> list[JsonObject]:
    """Managed-effort models: a system message before each replayed turn names the effort it
    ran at, and a last one names the effort of this turn."""
    result: list[JsonObject] = []
    for index, message in enumerate(messages):
        if index in levels:
            result.append(
                {"role": "system", "content": [], "output_config": {"effort": levels[index]}}
            )
        result.append(message)
    result.append({"role": "system", "content": [], "output_config": {"effort": active}})
    return result
