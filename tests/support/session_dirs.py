"""Directories of many session files for the resume picker: small ones, and one very large
one whose name is set near its end (as ``/name`` late in a long session does)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

LARGE_NAME = "the large one"


def _line(value: object) -> bytes:
    return orjson.dumps(value) + b"\n"


def _header(session_id: str, cwd: str) -> bytes:
    return _line(
        {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "cwd": cwd,
        }
    )


def _user(entry_id: str, parent: str | None, text: str) -> bytes:
    return _line(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "timestamp": 1,
            },
        }
    )


def write_sessions(
    directory: Path, count: int, *, large_bytes: int = 0, cwd: str = "/project"
) -> Path | None:
    """``count`` small sessions (ids ``0000…0000`` to ``…count``, mtimes in id order) and,
    with ``large_bytes``, one more of about that size; returns the large file."""
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        session_id = f"{number:08x}-0000-7000-8000-000000000000"
        path = directory / f"2026-01-01T00-00-00-000Z_{session_id}.jsonl"
        path.write_bytes(
            _header(session_id, cwd) + _user("a0000001", None, f"task number {number}")
        )
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    if not large_bytes:
        return None
    session_id = "ffffffff-0000-7000-8000-000000000000"
    path = directory / f"2026-01-02T00-00-00-000Z_{session_id}.jsonl"
    filler = _user("b0000002", "a0000001", "lorem ipsum " * 700)
    with path.open("wb") as stream:
        stream.write(_header(session_id, cwd))
        stream.write(_user("a0000001", None, "refactor the parser"))
        chunk = filler * 256
        written = 0
        while written < large_bytes:
            stream.write(chunk)
            written += len(chunk)
        stream.write(_user("c0000003", "b0000002", "needle-only-in-the-body"))
        stream.write(
            _line(
                {
                    "type": "session_info",
                    "id": "d0000004",
                    "parentId": "c0000003",
                    "timestamp": "2026-01-01T00:00:02.000Z",
                    "name": LARGE_NAME,
                }
            )
        )
    return path
