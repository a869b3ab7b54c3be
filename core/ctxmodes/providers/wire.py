"""What every wire format shares: the call's inputs, its event vocabulary, the message being
built.

The transports work on Pi's JSON shapes (plain dicts with Pi's camelCase keys): the context's
messages are exactly what Pi's agent passes after ``convertToLlm``, and the assistant message
is built key by key in the order pi-ai creates it, so what ctxmodes stores equals what Pi
stores. :class:`WireEvent` is pi-ai's event vocabulary (``start``, ``text_start`` …
``done``/``error``); :class:`~ctxmodes.providers.http_model.HttpModelProvider` turns it
into the host's :data:`~ctxmodes.providers.base.StreamEvent` values.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.jsvalues import parse_streaming_json

#: Error text of a call aborted while waiting or between events (pi-ai's wording).
ABORTED = "Request was aborted"

CacheRetention = Literal["none", "short", "long"]
#: A JSON object in pi-ai's shape (a message, a content block, a request body or event):
#: the transports read and write pi-ai's values key by key, as plain JSON.
JsonObject = dict[str, Any]
#: A message of pi-ai's context, or the assistant message a call builds.
PiMessage = JsonObject


@dataclass(frozen=True, slots=True)
class WireEvent:
    """One pi-ai ``AssistantMessageEvent`` (without the live ``partial``)."""

    type: str
    content_index: int | None = None
    delta: str | None = None
    content: str | None = None
    tool_call: dict[str, Any] | None = None
    reason: str | None = None
    #: The finished block of a ``thinking_end`` (Pi JSON), with its signature if any.
    thinking: dict[str, Any] | None = None


Emit = Callable[[WireEvent], None]


@dataclass(slots=True)
class PiContext:
    """pi-ai's ``Context``: system prompt, LLM-facing messages (Pi JSON) and tools."""

    system_prompt: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class StreamOptions:
    """The options of pi-ai's ``streamSimple`` that these transports honour.

    ``reasoning`` is the session's thinking level (``None`` when off); ``headers`` are merged
    over the model's (a ``None`` value removes one); ``metadata`` is client metadata that a
    transport may put on the wire (Codex's ``client_metadata``; Pi sends none).
    """

    api_key: str | None = None
    #: The endpoint takes requests without a key (a local server): none is required or sent.
    keyless: bool = False
    session_id: str | None = None
    reasoning: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    tool_choice: Any = None
    timeout_ms: int | None = 300_000
    max_retries: int | None = None
    max_retry_delay_ms: int | None = 60_000
    headers: dict[str, str | None] = field(default_factory=dict)
    cache_retention: CacheRetention | None = None
    reasoning_summary: str | None = None
    #: The user's thinking budget of a level, over pi-ai's (Pi's ``thinkingBudgets``).
    thinking_budgets: dict[str, int] | None = None
    text_verbosity: str | None = None
    service_tier: str | None = None
    sampling_params: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    env: Mapping[str, str] | None = None

    @classmethod
    def from_pi(cls, options: Mapping[str, Any]) -> StreamOptions:
        """Options written as pi-ai's camelCase object (the oracle's case files)."""
        names = {
            "apiKey": "api_key",
            "sessionId": "session_id",
            "reasoning": "reasoning",
            "maxTokens": "max_tokens",
            "temperature": "temperature",
            "toolChoice": "tool_choice",
            "timeoutMs": "timeout_ms",
            "maxRetries": "max_retries",
            "maxRetryDelayMs": "max_retry_delay_ms",
            "headers": "headers",
            "cacheRetention": "cache_retention",
            "reasoningSummary": "reasoning_summary",
            "thinkingBudgets": "thinking_budgets",
            "textVerbosity": "text_verbosity",
            "serviceTier": "service_tier",
            "samplingParams": "sampling_params",
            "metadata": "metadata",
            "env": "env",
        }
        values = {names[key]: value for key, value in options.items() if key in names}
        values.setdefault("timeout_ms", None)
        values.setdefault("max_retry_delay_ms", None)
        return cls(**values)


#: What a format without the Codex backend does with ctxmodes' encrypted tool outputs.
ENCRYPTED_OUTPUT_REFUSED = "Encrypted tool output requires the Codex transport"


def developer_texts(messages: list[PiMessage]) -> list[str]:
    """The text of each developer message in ``messages`` (ctxmodes' harness instructions),
    in order: formats without a developer role send them in their system channel.

    :raises WireError: an encrypted tool output, which only the Codex backend can read (it
        is never sent anywhere else as text).
    """
    texts: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "encryptedToolOutput":
            raise WireError(ENCRYPTED_OUTPUT_REFUSED)
        if role == "developer":
            blocks = message.get("content") or ()
            texts.append("\n".join(block.get("text", "") for block in blocks))
    return texts


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


def new_output(model: ModelSpec, api: str, timestamp: int) -> dict[str, Any]:
    """An empty assistant message in pi-ai's key order, ``stopReason`` still ``pending``."""
    return {
        "role": "assistant",
        "content": [],
        "api": api,
        "provider": model.provider,
        "model": model.id,
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "pending",
        "timestamp": timestamp,
    }


#: Streaming scratch fields that never reach a stored message.
SCRATCH_FIELDS = ("partialJson", "partialArgs", "streamIndex", "customInput", "index")
#: The scratch fields that hold a tool call's arguments while they stream.
ARGUMENT_FIELDS = ("partialJson", "partialArgs")


class ArgumentBuffer:
    """A tool call's argument text while it streams, in pieces.

    pi-ai re-parses the whole text after every delta; what it keeps is only the last parse,
    so parsing once at the end (or when the call fails) gives the same arguments — without
    a 10 MB argument costing quadratic time in copies and parses.
    """

    __slots__ = ("_pieces",)

    def __init__(self, text: str = "") -> None:
        self._pieces = [text] if text else []

    def append(self, piece: str) -> None:
        if piece:
            self._pieces.append(piece)

    def text(self) -> str:
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""


def strip_scratch(output: dict[str, Any]) -> None:
    """Drop the scratch fields; a tool call still streaming gets the arguments parsed so far."""
    for block in output["content"]:
        for name in ARGUMENT_FIELDS:
            buffer = block.get(name)
            if isinstance(buffer, ArgumentBuffer) and buffer.text():
                block["arguments"] = parse_streaming_json(buffer.text())
        for name in SCRATCH_FIELDS:
            block.pop(name, None)


class WireError(Exception):
    """A call failed; ``str(error)`` is the ``errorMessage`` Pi would store."""


class HttpStatusError(WireError):
    """The server answered with an error status (after any retries)."""

    def __init__(self, message: str, status: int, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status = status
        self.headers = dict(headers)
