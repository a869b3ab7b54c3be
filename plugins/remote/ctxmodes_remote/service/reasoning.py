"""The model's reasoning: the effort Codex asks for, and the model's thinking carried from one
request of a window to the next through the client, sealed.

Codex names a reasoning effort (``reasoning.effort``) with every request; it reaches the
upstream as the request's thinking level, which the transport clamps to what the model takes
(``none``, or no effort, is no thinking). Codex also keeps the ``reasoning`` items of an
answer and sends them back with the window's next requests (it asks for them with
``include: ["reasoning.encrypted_content"]``). Some models need their own thinking back:
Anthropic refuses a tool-use turn, thinking on, whose thinking block is missing or altered,
and OpenAI's reasoning models start over without theirs. So each thinking block of the
model's answer leaves as a reasoning item whose ``encrypted_content`` is the block (its text
and signature) sealed under the account's key and bound to the model that wrote it; its
summary is empty, since no client asked to be shown the thinking. A reasoning item the
service did not seal for this account and model (another backend's, an altered one, one from
before the upstream changed) is left out of the upstream request: the model thinks afresh,
as it would without it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from typing import Any

import orjson
from pydantic import ValidationError

from ctxmodes.providers import ModelInfo
from ctxmodes.session import ThinkingContent, codec, to_json
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


def catalog_levels(info: ModelInfo) -> list[str]:
    """The efforts a client may choose for the model: those of its thinking levels Codex
    names (none, for a model that does not think)."""
    levels = info.capabilities.supported_thinking_levels()
    return [effort for effort in CODEX_EFFORTS if effort in levels]


def _model_key(info: ModelInfo) -> str:
    return f"{info.provider}/{info.api}/{info.id}"


def reasoning_item(
    block: ThinkingContent, info: ModelInfo, encrypt: Callable[[str], str]
) -> dict[str, Any]:
    """The reasoning output item that carries ``block`` to the client and back, sealed."""
    sealed = {"kind": _SEALED_KIND, "model": _model_key(info), "block": to_json(block)}
    return {
        "type": "reasoning",
        "id": "rs_" + secrets.token_hex(16),
        "summary": [],
        "encrypted_content": encrypt(codec.dumps(sealed).decode()),
    }


def opened_thinking(
    item: Mapping[str, Any], info: ModelInfo, decrypt: Decrypt
) -> ThinkingContent | None:
    """The thinking block a reasoning item carries back for this model, or ``None`` when the
    service did not seal it for this account and model."""
    token = item.get("encrypted_content")
    if not isinstance(token, str):
        return None
    try:
        sealed = orjson.loads(decrypt(token))
    except (CiphertextError, ValueError):  # not ours, or not a thinking block we sealed
        return None
    if (
        not isinstance(sealed, dict)
        or sealed.get("kind") != _SEALED_KIND
        or sealed.get("model") != _model_key(info)
    ):
        return None
    try:
        return ThinkingContent.model_validate(sealed.get("block"))
    except ValidationError:
        return None
