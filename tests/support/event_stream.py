"""AWS event-stream frames, encoded as the Bedrock service sends them: a prelude (total and
header lengths, its CRC-32), string headers, the payload and the message's CRC-32."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        encoded += struct.pack("!B", len(raw_name)) + raw_name
        encoded += struct.pack("!BH", 7, len(raw_value)) + raw_value
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack("!II", total, len(encoded))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack("!I", zlib.crc32(message))


def event(kind: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, json.dumps(payload).encode())


def exception(kind: str, message: str) -> bytes:
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, json.dumps({"message": message}).encode())


def text_answer(text: str) -> bytes:
    return b"".join(
        [
            event("messageStart", {"role": "assistant"}),
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "end_turn"}),
            event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}),
        ]
    )
