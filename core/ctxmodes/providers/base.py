"""The provider protocol: how the host asks a model for one assistant message.

A provider turns a :class:`ModelRequest` into a stream of :data:`StreamEvent` values. The
stream always ends with exactly one terminal event carrying the final
:class:`~ctxmodes.session.models.AssistantMessage` in Pi's shape: :class:`StreamDone`
(``stopReason`` ``stop``, ``length`` or ``toolUse``) or :class:`StreamError` (``error``, or
``aborted`` when the abort signal fired mid-stream). Both are persisted by the host, as Pi
persists them; neither is an exception. Exceptions are reserved for failures of the
provider's own setup (a bad script, a missing credential), which end the run.

Events are plain frozen dataclasses: a stream yields one per token, so they stay cheap.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.alias_generators import to_camel

from ctxmodes.abort import AbortSignal
from ctxmodes.errors import CtxmodesError
from ctxmodes.session.models import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ctxmodes.thinking_levels import REASONING_LEVELS

if TYPE_CHECKING:
    from ctxmodes.tools.base import Tool

RequestPurpose = Literal["turn", "branch_summary", "compaction"]
LlmMessage = UserMessage | AssistantMessage | ToolResultMessage


class DeveloperMessage(BaseModel):
    """A developer-role message: instructions from the harness, not from the user.

    Never persisted and never produced by Pi's conversion: a mode puts it into a request at
    the provider boundary (``ctx_provider_request``); transports without a developer role
    send it as a system-level instruction.
    """

    model_config = ConfigDict(frozen=True)

    role: Literal["developer"] = "developer"
    content: list[TextContent]
    timestamp: int | float | None = None

    def model_post_init(self, context: Any, /) -> None:
        # The role is what makes it a developer message: always written, like Pi's roles.
        self.__pydantic_fields_set__.add("role")

    @property
    def text(self) -> str:
        return "\n".join(block.text for block in self.content)


class EncryptedToolOutput(BaseModel):
    """A tool result whose model-facing content is ciphertext only the model's service reads.

    Never persisted: a mode puts it into a request at the provider boundary in place of the
    stored ``toolResult`` (Remote's history and notes answers). A transport that declares
    :attr:`ModelCapabilities.encrypted_tool_arguments` sends it as the call's
    ``function_call_output`` with :meth:`output_items` as its ``output``.
    """

    # Field names as Pi's toolResult spells them, so a trace reads like the session.
    model_config = ConfigDict(frozen=True, alias_generator=to_camel, populate_by_name=True)

    role: Literal["encryptedToolOutput"] = "encryptedToolOutput"
    tool_call_id: str
    tool_name: str
    encrypted_content: str
    images: list[ImageContent] = Field(default_factory=list)
    timestamp: int | float | None = None

    def model_post_init(self, context: Any, /) -> None:
        self.__pydantic_fields_set__.add("role")

    def output_items(self) -> list[dict[str, str]]:
        """The Responses ``function_call_output.output`` items: the ciphertext first, then
        one ``input_image`` per image."""
        items = [{"type": "encrypted_content", "encrypted_content": self.encrypted_content}]
        items.extend(
            {"type": "input_image", "image_url": f"data:{image.mime_type};base64,{image.data}"}
            for image in self.images
        )
        return items


RequestMessage = LlmMessage | DeveloperMessage | EncryptedToolOutput


class ProviderError(CtxmodesError):
    """A provider cannot serve requests at all (configuration, not a model error)."""


#: How much a tool wants JSON-schema constrained sampling (Pi's ``constrainedSampling``).
StrictSampling = Literal["prefer", "require"]


class ToolSchema(BaseModel):
    """A tool as the model sees it.

    :ivar strict_sampling: the tool asks for strict (JSON-schema constrained) sampling of its
        arguments: ``prefer`` where the server and the schema allow it, ``require`` or fail
        the request (:mod:`ctxmodes.providers.transport.strict_schema`). A tool declares
        it with an optional ``strict_sampling`` attribute.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]
    strict_sampling: StrictSampling | None = None

    @model_serializer(mode="wrap")
    def _omit_unset_sampling(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        if dumped.get("strict_sampling") is None:
            dumped.pop("strict_sampling", None)
        return dumped

    @classmethod
    def from_tool(cls, tool: Tool) -> ToolSchema:
        return cls(
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,
            strict_sampling=getattr(tool, "strict_sampling", None),
        )


class NamespaceToolSchema(BaseModel):
    """A named group of function tools, for transports that offer namespaces (Responses).

    The model calls ``<namespace>.<tool>``; the call arrives as a tool call whose
    ``namespace`` is this name.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    tools: list[ToolSchema]


class ModelRequest(BaseModel):
    """One model call. Mutable: plugins may edit it before it is sent.

    :ivar messages: the LLM-facing messages (after Pi's ``convertToLlm``), oldest first.
    :ivar max_tokens: a cap on the response length; ``None`` leaves it to the provider.
    :ivar purpose: ``turn`` for the agent loop; summarization calls say which kind.
    :ivar session_id: the session's id: the prompt cache key and session headers on the wire.
    :ivar reasoning: the session's thinking level (``off`` … ``max``; ``None`` = off).
    :ivar thinking_budgets: the tokens the model may think at a level, by level (``minimal``
        … ``high``), where its format counts thinking in tokens; levels not named, and
        ``None``, keep the transport's own (Pi's ``thinkingBudgets``).
    :ivar headers: per-request HTTP headers, merged over the model's (``None`` removes one).
    :ivar client_metadata: the Responses ``client_metadata`` object (a mode's request
        identity, e.g. Codex's ``x-codex-window-id``); other transports ignore it.
    """

    system_prompt: str
    messages: list[RequestMessage]
    tools: list[ToolSchema | NamespaceToolSchema] = Field(default_factory=list)
    max_tokens: int | None = None
    purpose: RequestPurpose = "turn"
    session_id: str | None = None
    reasoning: str | None = None
    thinking_budgets: dict[str, int] | None = None
    headers: dict[str, str | None] = Field(default_factory=dict)
    client_metadata: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    """What the model behind a provider accepts on its wire; modes read these instead of
    comparing transport names.

    :ivar developer_role: developer-role messages reach the model as such (otherwise the
        transport sends them as system-level instructions).
    :ivar namespaced_tools: tools may be offered as namespaces (:class:`NamespaceToolSchema`),
        which Local and Tree then use for plaintext ``history`` and ``notes``. False on the
        Codex endpoint: its reserved namespaces take encrypted arguments, which only the
        Remote contract provides, so the other modes keep the flat routers there.
    :ivar encrypted_tool_arguments: the endpoint honours ``encrypted: true`` markers on
        tool-argument fields and answers ``encrypted_content`` outputs (Codex's native
        history and notes namespaces).
    :ivar images: user and tool-result messages may carry images.
    :ivar reasoning: the model takes a thinking level (Pi's ``model.reasoning``).
    :ivar thinking_levels: the levels it takes, lowest first (``None``: ``off`` alone for a
        model without reasoning, the usual five for one with it).
    """

    developer_role: bool = True
    namespaced_tools: bool = False
    encrypted_tool_arguments: bool = False
    images: bool = True
    reasoning: bool = False
    thinking_levels: tuple[str, ...] | None = None

    def supported_thinking_levels(self) -> tuple[str, ...]:
        """The thinking levels the model takes (Pi records a session's level clamped to
        them)."""
        if self.thinking_levels is not None:
            return self.thinking_levels
        return REASONING_LEVELS if self.reasoning else ("off",)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the host needs to know about the model behind a provider.

    ``provider``, ``api`` and ``id`` are the values the provider writes into every
    assistant message (``provider``, ``api``, ``model``).
    """

    provider: str
    api: str
    id: str
    context_window: int | None = None
    max_tokens: int | None = None
    capabilities: ModelCapabilities = ModelCapabilities()


@dataclass(frozen=True, slots=True)
class TextDelta:
    content_index: int
    delta: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    content_index: int
    delta: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class ThinkingComplete:
    """A thinking block that is complete: its text and, for a model that signs its thinking,
    the signature, which comes last. It ends the block's ``ThinkingDelta`` events; a host
    that only shows thinking as it streams may ignore it."""

    content_index: int
    block: ThinkingContent
    type: Literal["thinking_end"] = "thinking_end"


@dataclass(frozen=True, slots=True)
class ToolCallComplete:
    """A tool call whose arguments are complete (providers stream them; hosts need whole)."""

    content_index: int
    tool_call: ToolCall
    type: Literal["toolcall"] = "toolcall"


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """Token usage reported by the provider; the last one before the end is final."""

    usage: Usage
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True)
class StreamDone:
    """Terminal event of a successful response."""

    message: AssistantMessage
    type: Literal["done"] = "done"


@dataclass(frozen=True, slots=True)
class StreamError:
    """Terminal event of a failed or aborted response; ``message`` is still persisted.

    :ivar retry_after_ms: how long the server asked to wait before the next request
        (``Retry-After``), when it said so.
    :ivar hint: what the user can do about it (how to log in after a 401), shown beside the
        error; the stored message keeps the provider's own words.
    """

    reason: Literal["error", "aborted"]
    message: AssistantMessage
    type: Literal["error"] = "error"
    retry_after_ms: float | None = None
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class TransportRetry:
    """The transport is about to resend a request that failed before streaming (Pi's
    ``retry.provider`` retries): attempt ``attempt`` of ``max_attempts`` starts after
    ``delay_ms``. The response is still to come; nothing of the failed try is kept."""

    attempt: int
    max_attempts: int
    delay_ms: float
    error: str
    type: Literal["transport_retry"] = "transport_retry"


StreamEvent = (
    TextDelta
    | ThinkingDelta
    | ThinkingComplete
    | ToolCallComplete
    | UsageUpdate
    | TransportRetry
    | StreamDone
    | StreamError
)


class Provider(ABC):
    """A model behind some transport.

    Implementations are used from one thread at a time per request but may serve several
    requests over their life; abort is signalled from other threads through ``signal``.
    """

    @property
    @abstractmethod
    def transport(self) -> str:
        """The wire shape, for plugins that adapt requests (``"scripted"``, ``"codex"`` ...)."""

    @property
    @abstractmethod
    def info(self) -> ModelInfo:
        """The model behind this provider."""

    @abstractmethod
    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        """Start one model call; iterate to receive its events.

        The iterator ends right after its terminal event (:class:`StreamDone` or
        :class:`StreamError`). When ``signal`` aborts, the stream ends promptly with a
        :class:`StreamError` whose message has ``stopReason`` ``"aborted"`` and whatever
        content arrived before.

        :raises ProviderError: the call cannot be made at all.
        """

    def deliver(
        self, request: ModelRequest, signal: AbortSignal, on_event: Callable[[StreamEvent], None]
    ) -> None:
        """Make one model call on the calling thread, handing each event to ``on_event`` as it
        arrives: the events :meth:`stream` yields, in the same order, ending with the terminal
        one. For a caller with a thread to give the call (a service forwarding events to its
        event loop): a provider whose transport parses on the thread that reads the socket
        overrides it and hands events over without a thread of its own; the default iterates
        :meth:`stream`.

        :raises ProviderError: the call cannot be made at all.
        """
        for event in self.stream(request, signal):
            on_event(event)

    def complete(
        self,
        request: ModelRequest,
        signal: AbortSignal,
        on_retry: Callable[[TransportRetry], None] | None = None,
    ) -> AssistantMessage:
        """Run :meth:`stream` to its end and return the final assistant message;
        ``on_retry`` is told of each transport-level retry as it happens."""
        for event in self.stream(request, signal):
            if isinstance(event, StreamDone | StreamError):
                return event.message
            if isinstance(event, TransportRetry) and on_retry is not None:
                on_retry(event)
        raise ProviderError(f"{self.transport} stream ended without a final message")

    def check_credentials(self) -> None:  # noqa: B027 - optional hook; most need none
        """Make sure a request could be authenticated, without sending one: the host calls
        it before a prompt is accepted, so a missing key is one line and the session is left
        as it was. The default needs no credentials.

        :raises ProviderError: no credentials are available (saying how to provide them).
        """

    def close(self) -> None:  # noqa: B027 - optional hook; most providers hold nothing
        """Release connections; the default has nothing to release."""


ModelRequest.model_rebuild()
