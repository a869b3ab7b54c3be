"""The model's reasoning: the effort Codex asks for, and the model's thinking carried from one
request of a window to the next through the client, sealed.

Codex names a reasoning effort (``reasoning.effort``) with every request; it reaches the
upstream as the request's thinking level, which the transport clamps to what the model takes
(``none``, or no effort, is no thinking). Codex also keeps the ``reasoning`` items of an
answer and sends them back with the window's next requests (it asks for them with
``include: ["reasoning.encrypted_content"]``). Some models need their own thinking back:
Anthropic refuses a tool-use turn, thinking on, whose thinking block is missing or altered,
and OpenAI's reasoning models start over without theirs. So each thinking block of the
model's answer leaves as a reasoning item (:class:`ReasoningItems`) whose
``encrypted_content`` is the block (its text and signature) sealed under the account's key
and bound to the model that wrote it; its summary is the thinking text when the client asked
to be shown the reasoning (``reasoning.summary``), else empty. A reasoning item the service
did not seal for this account and model (another backend's, an altered one, one from before
the upstream changed) is left out of the upstream request: the model thinks afresh, as it
would without it. A model that signs its tool calls instead (Gemini's ``thoughtSignature``,
which Gemini 3 requires back on the calls of the turn) gets each signature back the same way:
a reasoning item of its own, sealed, just before the call it belongs to.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from ctxmodes.providers import ModelInfo
from ctxmodes.session import AssistantMessage, ThinkingContent, ToolCall, codec, to_json
from ctxmodes_remote.service.crypto import CiphertextError
from ctxmodes_remote.service.responses_items import Decrypt

#: Codex's reasoning efforts that ask a model to think, lowest first (its ``none`` asks it
#: not to); each is also a ctxmodes thinking level of the same name.
CODEX_EFFORTS = ("minimal", "low", "medium", "high", "xhigh")
#: What a sealed reasoning item holds, so that no other sealed value passes for one.
_SEALED_KIND = "ctxmodes-thinking-v1"


def requested_level(body: Mapping[str, Any]) -> str | None:
    """The thinking level a Responses body asks for (``None``: no thinking)."""
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    return effort if effort in CODEX_EFFORTS else None


def carries_reasoning(body: Mapping[str, Any]) -> bool:
    """Whether the client keeps reasoning items to send back (it included their content)."""
    include = body.get("include")
    return isinstance(include, list) and "reasoning.encrypted_content" in include


def wants_summaries(body: Mapping[str, Any]) -> bool:
    """Whether the client asked to be shown the model's reasoning (``reasoning.summary``)."""
    reasoning = body.get("reasoning")
    summary = reasoning.get("summary") if isinstance(reasoning, dict) else None
    return summary in ("auto", "concise", "detailed")


def catalog_levels(info: ModelInfo) -> list[str]:
    """The efforts a client may choose for the model: those of its thinking levels Codex
    names (none, for a model that does not think)."""
    levels = info.capabilities.supported_thinking_levels()
    return [effort for effort in CODEX_EFFORTS if effort in levels]


def _model_key(info: ModelInfo) -> str:
    return f"{info.provider}/{info.api}/{info.id}"


def _sealed_item(
    item_id: str,
    carried: dict[str, Any],
    info: ModelInfo,
    encrypt: Callable[[str], str],
    summary: list[dict[str, str]],
) -> dict[str, Any]:
    """The reasoning output item that carries ``carried`` (a thinking block, a call's
    signature) to the client and back, sealed."""
    sealed = {"kind": _SEALED_KIND, "model": _model_key(info), **carried}
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": summary,
        "encrypted_content": encrypt(codec.dumps(sealed).decode()),
    }


#: One Responses stream event, before the stream numbers it: its type and data.
Event = tuple[str, dict[str, Any]]


@dataclass
class ReasoningItems:
    """The reasoning items of one answer as its Responses stream carries them: an item opens
    at the model's first thought, streams its summary (the thinking text) when the client
    asked for summaries, and is done, its block sealed, once the model completed the block;
    so each item comes before what the model said after thinking. ``output`` is the answer's
    output items, shared with the stream: an open item holds its place there."""

    info: ModelInfo
    encrypt: Callable[[str], str]
    summaries: bool
    output: list[dict[str, Any]]
    #: The open item: its place in ``output``, its id, whether its summary part was opened.
    _open: tuple[int, str, bool] | None = None
    #: The content indices of the answer's blocks already done.
    _done: set[int] = field(default_factory=set)

    @property
    def is_open(self) -> bool:
        return self._open is not None

    def thought(self, delta: str) -> list[Event]:
        """A piece of the thinking (opening the item at the first)."""
        events = [] if self._open else self._start(self.summaries)
        assert self._open is not None
        index, item_id, streamed = self._open
        if streamed:
            summary = {"item_id": item_id, "output_index": index, "summary_index": 0}
            events.append(("response.reasoning_summary_text.delta", {**summary, "delta": delta}))
        return events

    def complete(self, content_index: int, block: ThinkingContent) -> list[Event]:
        """The block at ``content_index`` is complete: its item is done, sealed (nothing,
        for an empty block or one done already)."""
        if content_index in self._done or not (block.thinking or block.thinking_signature):
            return []
        self._done.add(content_index)
        text = "" if block.redacted else block.thinking
        events = [] if self._open else self._start(self.summaries and bool(text))
        assert self._open is not None
        (index, item_id, streamed), self._open = self._open, None
        if streamed:
            part = {"type": "summary_text", "text": text}
            where = {"item_id": item_id, "output_index": index, "summary_index": 0}
            events.append(("response.reasoning_summary_text.done", {**where, "text": text}))
            events.append(("response.reasoning_summary_part.done", {**where, "part": part}))
        summary = [{"type": "summary_text", "text": text}] if streamed and text else []
        item = _sealed_item(item_id, {"block": to_json(block)}, self.info, self.encrypt, summary)
        self.output[index] = item
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
        return events

    def call_signature(self, call: ToolCall) -> list[Event]:
        """An item of its own, just before the call, for the signature the model put on it
        (nothing for a call without one)."""
        if not call.thought_signature:
            return []
        index, item_id, events = self._added(summary_part=False)
        carried = {"call": {"id": call.id, "signature": call.thought_signature}}
        item = _sealed_item(item_id, carried, self.info, self.encrypt, [])
        self.output[index] = item
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
        return events

    def finish(self, message: AssistantMessage) -> list[Event]:
        """At the answer's end: every thinking block not done yet (a provider need not say
        when a block is complete)."""
        events: list[Event] = []
        for position, block in enumerate(message.content):
            if isinstance(block, ThinkingContent):
                events += self.complete(position, block)
        return events

    def _start(self, summary_part: bool) -> list[Event]:
        index, item_id, events = self._added(summary_part)
        self._open = (index, item_id, summary_part)
        return events

    def _added(self, summary_part: bool) -> tuple[int, str, list[Event]]:
        """A new item in its place in ``output``: its place, its id and the events that
        announce it (with its summary part's, if it has one)."""
        item_id, index = "rs_" + secrets.token_hex(16), len(self.output)
        item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": []}
        self.output.append(item)
        events: list[Event] = [
            ("response.output_item.added", {"output_index": index, "item": item})
        ]
        if summary_part:
            part = {"type": "summary_text", "text": ""}
            where = {"item_id": item_id, "output_index": index, "summary_index": 0}
            events.append(("response.reasoning_summary_part.added", {**where, "part": part}))
        return index, item_id, events


@dataclass(frozen=True, slots=True)
class CallSignature:
    """The signature the model put on one of its tool calls (Gemini's ``thoughtSignature``):
    the model requires it back on that call."""

    call_id: str
    signature: str


def opened_reasoning(
    item: Mapping[str, Any], info: ModelInfo, decrypt: Decrypt
) -> ThinkingContent | CallSignature | None:
    """What a reasoning item carries back for this model: a thinking block, or a tool call's
    signature; ``None`` when the service did not seal it for this account and model."""
    token = item.get("encrypted_content")
    if not isinstance(token, str):
        return None
    try:
        sealed = orjson.loads(decrypt(token))
    except (CiphertextError, ValueError):  # not ours, or not a value we sealed for this
        return None
    if (
        not isinstance(sealed, dict)
        or sealed.get("kind") != _SEALED_KIND
        or sealed.get("model") != _model_key(info)
    ):
        return None
    call = sealed.get("call")
    if isinstance(call, dict):
        call_id, signature = call.get("id"), call.get("signature")
        if isinstance(call_id, str) and isinstance(signature, str):
            return CallSignature(call_id, signature)
        return None
    try:
        return ThinkingContent.model_validate(sealed.get("block"))
    except ValidationError:
        return None
