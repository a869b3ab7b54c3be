"""Codex's events: its own error and completion events mapped onto the Responses events
(read by :class:`~ctxmodes.providers.apis.openai.responses_stream.ResponsesStream`).

Pi's Codex SSE parser splits frames on ``\\n\\n`` only; ctxmodes' SSE reader follows the
event-stream rules, so CRLF-framed streams work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from ctxmodes.providers.jsvalues import stringify
from ctxmodes.providers.transport.sse import iter_events
from ctxmodes.providers.wire import JsonObject, PiMessage, WireError

_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled", "queued", "in_progress"})


def codex_events(texts: Iterable[str], output: PiMessage) -> Iterator[JsonObject]:
    """Codex's event mapping over a correct SSE parse of the body read as ``texts`` (see the
    module docstring); ends at the terminal event."""
    for sse in iter_events(texts, dispatch_at_end=True):
        data = sse.data.strip()
        if not data or data == "[DONE]":
            continue
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise WireError(f"Invalid Codex SSE JSON: {error}") from error
        kind = event.get("type") if isinstance(event, dict) else None
        if not isinstance(kind, str):
            continue
        if kind == "error":
            nested = event.get("error") if isinstance(event.get("error"), dict) else {}
            message = event.get("message") if isinstance(event.get("message"), str) else None
            message = message or (
                nested.get("message") if isinstance(nested.get("message"), str) else None
            )
            code = event.get("code") if isinstance(event.get("code"), str) else nested.get("code")
            raise WireError(f"Codex error: {message or code or stringify(event)}")
        if kind == "response.failed":
            failure = (event.get("response") or {}).get("error") or {}
            raise WireError(failure.get("message") or "Codex response failed")
        if kind in ("response.done", "response.completed", "response.incomplete"):
            answer = event.get("response")
            if isinstance(answer, dict):
                if isinstance(answer.get("end_turn"), bool):
                    output["endTurn"] = answer["end_turn"]
                status = answer.get("status")
                answer = {**answer, "status": status if status in _STATUSES else None}
            yield {**event, "type": "response.completed", "response": answer}
            return
        yield event
