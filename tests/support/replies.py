"""An assistant message as a session file holds it, for the tests of how a reply that did not
finish is shown: some text, tool calls or none, and how it stopped."""

from __future__ import annotations

from typing import Any

_NO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
_NO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def ended_reply(stop: str, error: str | None = None, *, calls: bool = False) -> dict[str, Any]:
    """A reply of some text (and a tool call with ``calls``) that stopped for ``stop``,
    ``error`` its ``errorMessage`` when given."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "partial answer"}]
    if calls:
        content.append({"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}})
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "openai-responses",
        "provider": "openai",
        "model": "m",
        "usage": {**_NO_USAGE, "cost": _NO_COST},
        "stopReason": stop,
        "timestamp": 1,
    }
    if error is not None:
        message["errorMessage"] = error
    return message
