"""Server-sent events from an httpx response, parsed by httpx-sse's decoders.

httpx-sse follows the WHATWG parsing rules (``\\n``, ``\\r\\n`` and ``\\r`` line ends,
comments, multi-line data) but, per the specification, drops an event that the stream ends
before its blank line. Pi's Codex parser dispatches that last event (and some servers end the
stream that way), the OpenAI SDK's does not: :func:`iter_events` does either. Its
``EventSource`` also insists on a ``text/event-stream`` content type, which Pi does not, so
the decoders are driven directly.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder, SSELineDecoder


def iter_events(
    response: httpx.Response, *, dispatch_at_end: bool = False
) -> Iterator[ServerSentEvent]:
    """Every event of the body; with ``dispatch_at_end`` also one the stream ends inside."""
    lines = SSELineDecoder()
    decoder = SSEDecoder()
    for text in response.iter_text():
        for line in lines.decode(text):
            event = decoder.decode(line)
            if event is not None:
                yield event
    if not dispatch_at_end:
        return
    for line in lines.flush():
        event = decoder.decode(line)
        if event is not None:
            yield event
    last = decoder.decode("")
    if last is not None:
        yield last
