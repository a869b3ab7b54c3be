"""The ``/responses`` model side: a Codex Responses request becomes a ctxmodes
:class:`~ctxmodes.providers.base.ModelRequest` for the upstream provider, and the provider's
stream becomes Responses SSE events.

Upstream, the model sees plaintext only: encrypted argument values and ``encrypted_content``
outputs are opened first (:mod:`.responses_items`). Downstream, the client sees ciphertext
only where the contract says so: the values of the fields the request's tool schemas mark
``"encrypted": true`` are encrypted in every ``function_call`` before it is streamed, and
the call lists them in ``encrypted_function_args``.

The model's reasoning is carried through the client sealed (:mod:`.reasoning`). Items the
upstream wire cannot express are left out of its request: reasoning the service did not
seal, and hosted tools (web search, image generation, tool search); a freeform
(``custom``) tool is offered as a function taking one ``input`` string. To a model whose wire
has no namespaces (Chat Completions, Anthropic, Google), a namespace's tools are offered as
functions named ``<namespace>__<tool>`` (``notes__write_file``, as Codex names MCP tools):
offered by their bare names, ``history`` and ``notes`` would both have a ``search_contents``.
Its calls of such a name go back to the client in the namespace, as Codex declared them.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxmodes.providers import (
    DeveloperMessage,
    ModelInfo,
    ModelRequest,
    NamespaceToolSchema,
    RequestMessage,
    StreamDone,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    ToolSchema,
)
from ctxmodes.session import (
    AssistantMessage,
    ContentBlock,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    codec,
)
from ctxmodes_remote.service.reasoning import (
    CallSignature,
    Event,
    ReasoningItems,
    opened_reasoning,
    requested_level,
)
from ctxmodes_remote.service.responses_items import (
    Decrypt,
    content_parts,
    image_of_part,
    open_call,
)

Encrypt = Callable[[str], str]
_CUSTOM_PARAMETERS = {"type": "object", "properties": {"input": {"type": "string"}}}
#: Between a namespace and its tool's name, for a model whose wire has no namespaces.
FLAT_SEPARATOR = "__"


def _now_ms() -> int:
    return int(time.time() * 1000)


def _zero_usage() -> Usage:
    zero = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    return Usage.model_validate({**zero, "total_tokens": 0, "cost": {**zero, "total": 0}})


def failure_event(info: ModelInfo, message: str) -> StreamError:
    """The terminal event of a stream the upstream could not produce at all."""
    failed = AssistantMessage(
        content=[],
        api=info.api,
        provider=info.provider,
        model=info.id,
        usage=_zero_usage(),
        stop_reason="error",
        error_message=message,
        timestamp=_now_ms(),
    )
    return StreamError(reason="error", message=failed)


def _blocks(parts: Sequence[Mapping[str, Any]]) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for part in parts:
        if part.get("type") == "input_text":
            blocks.append(TextContent(text=part["text"]))
        else:
            image = _data_url_image(part)
            blocks.append(image if image is not None else TextContent(text="[image]"))
    return blocks


def _data_url_image(part: Mapping[str, Any]) -> ImageContent | None:
    image = image_of_part(part)
    return ImageContent(data=image.data, mime_type=image.mime_type) if image else None


def _tool_schemas(tools: object) -> list[ToolSchema | NamespaceToolSchema]:
    schemas: list[ToolSchema | NamespaceToolSchema] = []
    if not isinstance(tools, list):
        return schemas
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        if tool.get("type") == "namespace":
            children = [
                schema
                for schema in _tool_schemas(tool.get("tools"))
                if isinstance(schema, ToolSchema)
            ]
            schemas.append(
                NamespaceToolSchema(
                    name=tool["name"], description=str(tool.get("description", "")), tools=children
                )
            )
        elif tool.get("type") in ("function", "custom"):
            parameters = tool.get("parameters") if tool.get("type") == "function" else None
            schemas.append(
                ToolSchema(
                    name=tool["name"],
                    description=str(tool.get("description", "")),
                    parameters=parameters if isinstance(parameters, dict) else _CUSTOM_PARAMETERS,
                )
            )
    return schemas


def flat_namespaces(tools: object, info: ModelInfo) -> frozenset[str]:
    """The namespaces of a request's ``tools`` whose tools the model is offered one by one,
    as ``<namespace>__<tool>`` (none for a model that takes namespaces)."""
    if info.capabilities.namespaced_tools or not isinstance(tools, list):
        return frozenset()
    return frozenset(
        tool["name"]
        for tool in tools
        if isinstance(tool, dict)
        and tool.get("type") == "namespace"
        and isinstance(tool.get("name"), str)
    )


def _flattened(
    schemas: list[ToolSchema | NamespaceToolSchema],
) -> list[ToolSchema | NamespaceToolSchema]:
    flat: list[ToolSchema | NamespaceToolSchema] = []
    for schema in schemas:
        if isinstance(schema, ToolSchema):
            flat.append(schema)
            continue
        for tool in schema.tools:
            described = f"{schema.description}\n\n{tool.description}".strip()
            name = f"{schema.name}{FLAT_SEPARATOR}{tool.name}"
            flat.append(tool.model_copy(update={"name": name, "description": described}))
    return flat


class _MessageBuilder:
    """Collects consecutive assistant items into one assistant message."""

    def __init__(self, info: ModelInfo) -> None:
        self._info = info
        self.messages: list[RequestMessage] = []
        self._assistant: list[ContentBlock] = []
        self.tool_names: dict[str, str] = {}
        #: The signatures the model put on its calls, by call id, back on those calls.
        self.call_signatures: dict[str, str] = {}

    def assistant(self, block: ContentBlock) -> None:
        self._assistant.append(block)

    def other(self, message: RequestMessage) -> None:
        self.flush()
        self.messages.append(message)

    def _signed(self, block: ContentBlock) -> ContentBlock:
        signature = isinstance(block, ToolCall) and self.call_signatures.get(block.id)
        return block.model_copy(update={"thought_signature": signature}) if signature else block

    def flush(self) -> None:
        if not self._assistant:
            return
        stop = "toolUse" if any(isinstance(b, ToolCall) for b in self._assistant) else "stop"
        # Reasoning items follow the answer they belong to (they are sealed once it is
        # complete), but a model wants its thinking ahead of what it said and called.
        thinking = [b for b in self._assistant if isinstance(b, ThinkingContent)]
        said = [self._signed(b) for b in self._assistant if not isinstance(b, ThinkingContent)]
        self.messages.append(
            AssistantMessage(
                content=[*thinking, *said],
                api=self._info.api,
                provider=self._info.provider,
                model=self._info.id,
                usage=_zero_usage(),
                stop_reason=stop,
                timestamp=_now_ms(),
            )
        )
        self._assistant = []


def model_request(
    body: Mapping[str, Any],
    info: ModelInfo,
    marked: Mapping[tuple[str | None, str], frozenset[str]],
    decrypt: Decrypt,
    flat: frozenset[str],
    thinking_budgets: Mapping[str, int] | None = None,
) -> ModelRequest:
    """The upstream request for a Responses body; the tools of the namespaces ``flat`` (see
    :func:`flat_namespaces`) are offered one by one, and the effort asked for thinks with
    ``thinking_budgets`` where the model counts thinking in tokens (the configuration's,
    as a session's turn would).

    :raises CiphertextError: an encrypted value in the input is not this account's.
    """
    builder = _MessageBuilder(info)
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            parts = content_parts(item.get("content"), decrypt)
            role = item.get("role")
            if role == "assistant":
                for block in _blocks(parts):
                    builder.assistant(block)
            elif role == "user":
                builder.other(UserMessage(content=_blocks(parts), timestamp=_now_ms()))
            elif role in ("developer", "system"):
                texts = [TextContent(text=p["text"]) for p in parts if p["type"] == "input_text"]
                builder.other(DeveloperMessage(content=texts))
        elif kind in ("function_call", "custom_tool_call"):
            if kind == "function_call":
                call = open_call(item, marked, decrypt)
                name, namespace, arguments = call.name, call.namespace, call.arguments
                call_id = call.call_id
            else:
                name, namespace = str(item.get("name", "")), None
                arguments, call_id = {"input": item.get("input")}, str(item.get("call_id", ""))
            if namespace in flat:
                name, namespace = f"{namespace}{FLAT_SEPARATOR}{name}", None
            fields: dict[str, Any] = {"id": call_id, "name": name, "arguments": arguments}
            if namespace is not None:
                fields["namespace"] = namespace
            builder.tool_names[call_id] = name
            builder.assistant(ToolCall(**fields))
        elif kind == "reasoning":
            carried = opened_reasoning(item, info, decrypt)
            if isinstance(carried, CallSignature):
                builder.call_signatures[carried.call_id] = carried.signature
            elif carried is not None:
                builder.assistant(carried)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = str(item.get("call_id", ""))
            parts = content_parts(item.get("output"), decrypt)
            builder.other(
                ToolResultMessage(
                    tool_call_id=call_id,
                    tool_name=builder.tool_names.get(call_id, ""),
                    content=_blocks(parts),
                    is_error=False,
                    timestamp=_now_ms(),
                )
            )
    builder.flush()
    instructions = body.get("instructions")
    tools = _tool_schemas(body.get("tools"))
    return ModelRequest(
        system_prompt=instructions if isinstance(instructions, str) else "",
        messages=builder.messages,
        tools=_flattened(tools) if flat else tools,
        reasoning=requested_level(body),
        thinking_budgets=dict(thinking_budgets) if thinking_budgets else None,
    )


# -- the stream back ------------------------------------------------------------------------


def _usage_json(usage: Usage) -> dict[str, Any]:
    """A message's usage in the Responses shape."""
    return {
        "input_tokens": int(usage.input + usage.cache_read),
        "input_tokens_details": {"cached_tokens": int(usage.cache_read)},
        "output_tokens": int(usage.output),
        "output_tokens_details": {"reasoning_tokens": int(usage.reasoning or 0)},
        "total_tokens": int(usage.total_tokens),
    }


@dataclass
class ResponseStream:
    """Turns provider events into Responses SSE events (``(event type, data)`` pairs) and
    remembers the finished output items in plaintext, for history."""

    model: str
    marked: Mapping[tuple[str | None, str], frozenset[str]]
    encrypt: Encrypt
    #: Namespaces whose tools the model was offered one by one (see :func:`flat_namespaces`).
    flat: frozenset[str] = frozenset()
    #: The model whose thinking leaves as sealed reasoning items (``None``: the client does
    #: not keep them, see :func:`~.reasoning.carries_reasoning`).
    reasoning_of: ModelInfo | None = None
    #: The client asked to be shown the thinking (see :func:`~.reasoning.wants_summaries`).
    reasoning_summaries: bool = False
    response_id: str = field(default_factory=lambda: "resp_" + secrets.token_hex(12))
    #: The output items as the model produced them (arguments in plaintext).
    plain_output: list[dict[str, Any]] = field(default_factory=list)
    _sent_output: list[dict[str, Any]] = field(default_factory=list)
    _text: list[str] | None = None
    _text_id: str = ""
    _sequence: int = 0
    _reasoning: ReasoningItems | None = None

    def __post_init__(self) -> None:
        if self.reasoning_of is not None:
            self._reasoning = ReasoningItems(
                self.reasoning_of, self.encrypt, self.reasoning_summaries, self._sent_output
            )

    def _event(self, kind: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self._sequence += 1
        return kind, {"type": kind, "sequence_number": self._sequence, **data}

    def _response(self, status: str, **extra: Any) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "model": self.model,
            "status": status,
            "output": list(self._sent_output),
            **extra,
        }

    def start(self) -> Iterator[tuple[str, dict[str, Any]]]:
        yield self._event("response.created", {"response": self._response("in_progress")})

    def feed(self, event: StreamEvent) -> Iterator[tuple[str, dict[str, Any]]]:
        if isinstance(event, TextDelta):
            if self._text is None:
                yield from self._open_text()
            assert self._text is not None
            self._text.append(event.delta)
            yield self._event(
                "response.output_text.delta",
                {
                    "item_id": self._text_id,
                    "output_index": len(self._sent_output),
                    "content_index": 0,
                    "delta": event.delta,
                },
            )
        elif isinstance(event, ThinkingDelta) and self._reasoning is not None:
            if not self._reasoning.is_open:
                yield from self._close_text()
            yield from self._numbered(self._reasoning.thought(event.delta))
        elif isinstance(event, ThinkingComplete) and self._reasoning is not None:
            yield from self._numbered(self._reasoning.complete(event.content_index, event.block))
        elif isinstance(event, ToolCallComplete):
            yield from self._close_text()
            if self._reasoning is not None:
                yield from self._numbered(self._reasoning.call_signature(event.tool_call))
            yield from self._tool_call(event.tool_call)
        elif isinstance(event, StreamDone):
            # The final message's usage: every provider reports it there (a model over HTTP
            # sends no UsageUpdate), and Codex counts its window's tokens from it.
            yield from self._close_text()
            if self._reasoning is not None:
                yield from self._numbered(self._reasoning.finish(event.message))
            usage = _usage_json(event.message.usage)
            yield self._event(
                "response.completed", {"response": self._response("completed", usage=usage)}
            )
        elif isinstance(event, StreamError):
            yield from self._close_text()
            message = event.message.error_message or "the upstream model failed"
            error = {"code": "server_error", "message": message}
            yield self._event(
                "response.failed", {"response": self._response("failed", error=error)}
            )

    def _open_text(self) -> Iterator[tuple[str, dict[str, Any]]]:
        self._text = []
        self._text_id = "msg_" + secrets.token_hex(16)
        item = {
            "type": "message",
            "id": self._text_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        index = len(self._sent_output)
        yield self._event("response.output_item.added", {"output_index": index, "item": item})
        part = {"type": "output_text", "text": "", "annotations": []}
        yield self._event(
            "response.content_part.added",
            {"item_id": self._text_id, "output_index": index, "content_index": 0, "part": part},
        )

    def _close_text(self) -> Iterator[tuple[str, dict[str, Any]]]:
        if self._text is None:
            return
        text = "".join(self._text)
        self._text = None
        index = len(self._sent_output)
        ids = {"item_id": self._text_id, "output_index": index, "content_index": 0}
        yield self._event("response.output_text.done", {**ids, "text": text})
        part = {"type": "output_text", "text": text, "annotations": []}
        yield self._event("response.content_part.done", {**ids, "part": part})
        item = {
            "type": "message",
            "id": self._text_id,
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
        yield from self._finish_item(item, item)

    def _tool_call(self, call: ToolCall) -> Iterator[tuple[str, dict[str, Any]]]:
        namespace, _, name = call.name.partition(FLAT_SEPARATOR)
        if call.namespace is None and name and namespace in self.flat:
            call = call.model_copy(update={"namespace": namespace, "name": name})
        plain: dict[str, Any] = {
            "type": "function_call",
            # Minted here, as message ids are: upstream call ids may repeat across processes
            # (a scripted model numbers from 1 in each), and the id keys the recorded item.
            "id": "fc_" + secrets.token_hex(16),
            "call_id": call.id,
            "name": call.name,
        }
        if call.namespace is not None:
            plain["namespace"] = call.namespace
        marked = self.marked.get((call.namespace, call.name), frozenset())
        arguments = dict(call.arguments)
        encrypted = [f for f in sorted(marked) if isinstance(arguments.get(f), str)]
        for name in encrypted:
            arguments[name] = self.encrypt(arguments[name])
        sent = {
            **plain,
            "arguments": codec.dumps(arguments).decode(),
            "status": "completed",
        }
        if encrypted:
            sent["encrypted_function_args"] = encrypted
        plain["arguments"] = codec.dumps(call.arguments).decode()
        index = len(self._sent_output)
        added = {**sent, "arguments": "", "status": "in_progress"}
        yield self._event("response.output_item.added", {"output_index": index, "item": added})
        yield self._event(
            "response.function_call_arguments.done",
            {"item_id": sent["id"], "output_index": index, "arguments": sent["arguments"]},
        )
        yield from self._finish_item(sent, plain)

    def _numbered(self, events: list[Event]) -> Iterator[tuple[str, dict[str, Any]]]:
        for kind, data in events:
            yield self._event(kind, data)

    def _finish_item(
        self, sent: dict[str, Any], plain: dict[str, Any]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        index = len(self._sent_output)
        self._sent_output.append(sent)
        self.plain_output.append(plain)
        yield self._event("response.output_item.done", {"output_index": index, "item": sent})
