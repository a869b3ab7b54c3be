"""Pi's session events (its JSON and RPC modes) made comparable between two programs."""

from __future__ import annotations

import json
from typing import Any


def normalised_events(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with what legitimately differs between two runs or two programs made
    equal, and nothing else:

    - the header's ``id`` and ``timestamp``, and every message's ``timestamp``: a new
      session and the wall clock (the ``cwd`` is the same directory and stays);
    - an answer's ``message_start`` snapshot (``stopReason`` ``pending``): Pi serialises its
      live partial message once its transport may already have filled in content and the
      response id, so its ``content`` and ``responseId`` are a race;
    - the ``usage`` of each ``message_update`` but a message's last: Pi's is the live
      partial's, a race with the chunk reporting usage; the last one (after the stream
      ended) is the final usage in both;
    - a tool call's ``toolcall_delta`` updates, joined into one with the parsed arguments:
      Pi streams the arguments' JSON as the chunks come, ctxmodes' transports hand over a
      tool call whole (its arguments, already parsed, in one delta).
    """
    result: list[dict[str, Any]] = []
    for event in events:
        event = _without_timestamps(event)
        if event["type"] == "session":
            event = {**event, "id": "<id>", "timestamp": "<timestamp>"}
        if event["type"] == "message_start" and event["message"].get("stopReason") == "pending":
            partial = {**event["message"], "content": []}
            partial.pop("responseId", None)
            event = {**event, "message": partial}
        if event["type"] == "message_update":
            update = event["assistantMessageEvent"]
            before = result[-1] if result else None
            if update["type"] == "toolcall_delta":
                if (
                    before is not None
                    and before["assistantMessageEvent"]["type"] == "toolcall_delta"
                ):
                    result.pop()
                    update = {
                        **update,
                        "delta": before["assistantMessageEvent"]["delta"] + update["delta"],
                    }
                event = {**event, "assistantMessageEvent": update}
            if before is not None and before["type"] == "message_update":
                before["usage"] = "<live usage>"
        result.append(event)
    for event in result:
        update = event.get("assistantMessageEvent", {})
        if update.get("type") == "toolcall_delta":
            update["delta"] = json.loads(update["delta"])
    return result


def _without_timestamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: "<timestamp>" if key == "timestamp" else _without_timestamps(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without_timestamps(item) for item in value]
    return value
