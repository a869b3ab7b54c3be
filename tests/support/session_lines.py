"""Building session-file bytes by hand, for reader tests that need lines no writer produces."""

from __future__ import annotations

from typing import Any

from ctxmodes.session import codec

HEADER = {
    "type": "session",
    "version": 3,
    "id": "s1",
    "timestamp": "2025-01-01T00:00:00.000Z",
    "cwd": "/p",
}


def user_entry(entry_id: str, parent: str | None, text: str = "q") -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }


def lines(*records: Any) -> bytes:
    """JSONL bytes: records are encoded as Pi writes them; ``bytes`` are taken as they are."""
    return b"".join(r if isinstance(r, bytes) else codec.dumps_line(r) for r in records)
