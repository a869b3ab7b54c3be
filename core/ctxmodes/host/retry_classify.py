"""Which failed answers a retry may fix: Pi's patterns for transient provider errors."""

from __future__ import annotations

import re

from ctxmodes.host.overflow import is_context_overflow
from ctxmodes.session.models import AssistantMessage

_NOT_TRANSIENT = re.compile(
    "|".join(
        (
            "GoUsageLimitError",
            "FreeUsageLimitError",
            "Monthly usage limit reached",
            "available balance",
            "insufficient_quota",
            "out of budget",
            "quota exceeded",
            "billing",
            # ctxmodes' own: a refused connection means no server runs at the URL.
            "Could not connect to .*: connection refused",
        )
    ),
    re.IGNORECASE,
)
_TRANSIENT = re.compile(
    "|".join(
        (
            "overloaded",
            "rate.?limit",
            "too many requests",
            "429",
            "500",
            "502",
            "503",
            "504",
            "524",
            "service.?unavailable",
            "server.?error",
            "internal.?error",
            "provider.?returned.?error",
            "exceeded request buffer limit while retrying upstream",
            "network.?error",
            "connection.?error",
            "connection.?refused",
            "connection.?lost",
            "other side closed",
            "fetch failed",
            "getaddrinfo",
            "ENOTFOUND",
            "EAI_AGAIN",
            "upstream.?connect",
            "reset before headers",
            "socket hang up",
            "socket connection was closed",
            "timed? out",
            "timeout",
            "terminated",
            "websocket.?closed",
            "websocket.?error",
            "ended without",
            "stream ended before message_stop",
            "stream ended before a terminal response event",
            "http2 request did not get a response",
            "retry delay",
            "you can retry your request",
            "try your request again",
            "please retry your request",
            "ResourceExhausted",
        )
    ),
    re.IGNORECASE,
)


def is_transient_error(message: AssistantMessage, context_window: int) -> bool:
    """Whether ``message`` failed in a way a retry may fix (Pi's classification)."""
    if message.stop_reason != "error" or not message.error_message:
        return False
    if is_context_overflow(message, context_window):
        return False
    text = message.error_message
    return not _NOT_TRANSIENT.search(text) and bool(_TRANSIENT.search(text))
