"""What the model sees of a managed session: the latest window only, its marker promoted to
a developer message.

Latest-boundary projection
    The model receives the messages from the latest ``kind: "window"`` marker on (the marker
    included). Pi's JSONL keeps everything; only the request is cut. Finding the boundary
    walks back from the end and stops there, so it costs O(window), not O(session). A
    marker met on the way whose details are malformed stops the request with
    :class:`~ctxmodes.windows.marker.MalformedMarkerError`: sending a window without knowing
    where it starts would silently mix windows. Markers before the boundary are dropped with
    everything else there, damaged or not.

Stripping (Off, or a transport that cannot take developer messages)
    Every ``codex-context-window`` message is removed.

Developer-role promotion
    Pi turns custom messages into user messages before the provider sees them, and nothing
    in a user message can be trusted to say "I am really a developer message": a user can
    type anything. So the marker travels through that conversion as a *carrier*: before
    conversion, :meth:`DeveloperMessageBridge.conceal` replaces each marker's content with
    ``<ctxmodes-developer-message:NONCE>``, a fresh random nonce per marker and request,
    and remembers the real text. At the provider boundary, :meth:`DeveloperMessageBridge.promote`
    turns exactly those user messages whose whole text is a carrier it issued into
    :class:`DeveloperMessage` values holding the real text. A user cannot forge a carrier:
    the nonce exists only in this process, is never persisted and never sent. Text that
    merely looks like a carrier stays an ordinary user message; a carrier that appears twice
    is an error (something copied the request). A bridge serves one request: ``conceal``
    starts over, ``promote`` (or ``reveal``) consumes what it issued. Every ``conceal`` must
    be followed by ``promote`` or ``reveal`` on the same request, or the model would read a
    meaningless carrier instead of its window marker.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TypeVar, cast

from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.base import DeveloperMessage
from ctxmodes.session.models import (
    AgentMessage,
    CustomMessage,
    TextContent,
    UserMessage,
)
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE, parse_marker_details

CARRIER_PREFIX = "<ctxmodes-developer-message:"
CARRIER_SUFFIX = ">"

M = TypeVar("M")


def is_marker_message(message: object) -> bool:
    """Whether ``message`` is a ``codex-context-window`` custom message (any kind)."""
    return isinstance(message, CustomMessage) and message.custom_type == CONTEXT_WINDOW_CUSTOM_TYPE


def latest_boundary(messages: Sequence[AgentMessage]) -> int | None:
    """Index of the latest window marker, or ``None`` when there is none.

    :raises MalformedMarkerError: a marker after the boundary (or the would-be boundary)
        has malformed details.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if is_marker_message(message):
            assert isinstance(message, CustomMessage)
            details = parse_marker_details(message.details)
            if details.context_management.kind == "window":
                return index
    return None


def latest_boundary_window_id(messages: Sequence[AgentMessage]) -> str | None:
    """The ``currentWindowId`` of the latest window marker in ``messages``."""
    index = latest_boundary(messages)
    if index is None:
        return None
    marker = messages[index]
    assert isinstance(marker, CustomMessage)
    return parse_marker_details(marker.details).context_management.current_window_id


def project_latest_window(messages: Sequence[AgentMessage]) -> list[AgentMessage]:
    """The messages from the latest window marker on (all of them when there is none)."""
    boundary = latest_boundary(messages)
    return list(messages if boundary is None else messages[boundary:])


def strip_markers(messages: Sequence[M]) -> list[M]:
    """``messages`` without any ``codex-context-window`` message."""
    return [message for message in messages if not is_marker_message(message)]


class CarrierError(CtxmodesError):
    """A developer-message carrier was duplicated between conceal and promote."""


def _text_of(content: str | Sequence[object]) -> str | None:
    """The text of content that is exactly one text (a string or a single text block)."""
    if isinstance(content, str):
        return content
    if len(content) == 1 and isinstance(content[0], TextContent):
        return content[0].text
    return None


class DeveloperMessageBridge:
    """Carries window markers through the custom-to-user conversion (see the module doc)."""

    __slots__ = ("_issued",)

    def __init__(self) -> None:
        self._issued: dict[str, str] = {}

    def conceal(self, messages: Sequence[AgentMessage]) -> list[AgentMessage]:
        """``messages`` with each marker's text replaced by a fresh carrier.

        Forgets carriers issued before: one bridge call pair per request.
        """
        self._issued = {}
        result: list[AgentMessage] = []
        for message in messages:
            if isinstance(message, CustomMessage) and is_marker_message(message):
                text = _marker_text(message)
                carrier = f"{CARRIER_PREFIX}{secrets.token_urlsafe(24)}{CARRIER_SUFFIX}"
                self._issued[carrier] = text
                result.append(message.model_copy(update={"content": carrier}))
            else:
                result.append(message)
        return result

    def promote(self, messages: Sequence[M]) -> list[M | DeveloperMessage]:
        """Replace each carrier-holding user message by a :class:`DeveloperMessage`.

        :raises CarrierError: an issued carrier appears more than once.
        """
        return self._replace(messages, developer=True)

    def reveal(self, messages: Sequence[M]) -> list[M | DeveloperMessage]:
        """Put the marker text back into the user messages (for a transport without a
        developer role); nothing is promoted."""
        return self._replace(messages, developer=False)

    def _replace(self, messages: Sequence[M], *, developer: bool) -> list[M | DeveloperMessage]:
        issued, self._issued = self._issued, {}
        used: set[str] = set()
        result: list[M | DeveloperMessage] = []
        for message in messages:
            text = _text_of(message.content) if isinstance(message, UserMessage) else None
            if text is None or text not in issued:
                result.append(message)
                continue
            if text in used:
                raise CarrierError("A context-window marker reached the request twice")
            used.add(text)
            content = [TextContent(text=issued[text])]
            if developer:
                timestamp = cast(UserMessage, message).timestamp
                result.append(DeveloperMessage(content=content, timestamp=timestamp))
            else:
                result.append(
                    cast(M, cast(UserMessage, message).model_copy(update={"content": content}))
                )
        return result


def _marker_text(message: CustomMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(block.text for block in message.content if isinstance(block, TextContent))
