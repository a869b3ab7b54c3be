"""Session files of every shape a tree can take, written line by line from a seed.

Each file mixes what a drawing of the tree has to get right: branches off any entry,
compactions, branch summaries (several of one entry, some empty), labels set and cleared
(of any JSON value), custom entries, window markers (some damaged), message roles of every
JSON type, lone surrogates and control characters in ids and roles, siblings with equal or
unreadable timestamps, parents unknown or written after their children, and lines the
session skips (blank, malformed, not an object, without an id). With ``hostile`` it adds
duplicated ids, an empty id, a self-parented entry and parent cycles.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

__all__ = ["write_varied_session"]

_ROLES: list[Any] = ["user", "assistant", "toolResult", "bashExecution", "custom"]
_ODD_ROLES: list[Any] = ["", None, 7, 0, 1.5, True, False, ["a"], {"b": 1}, "us\ud800er", "\x1b[2J"]
_LABELS: list[Any] = ["done", "", None, 3, ["x"], {"k": "v"}, "lab\u009b31m", "\ud83d"]
_STAMPS = ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z", "not a time", None, 5]
_SKIPPED = ["", "not json", "[1, 2]", '{"type": "message"}', "null", '{"id": 5}']


def _marker(rng: random.Random, number: int) -> dict[str, Any]:
    management: dict[str, Any] = {
        "protocol": 1,
        "kind": rng.choice(["window", "window", "reminder"]),
        "firstWindowId": "w0",
        "currentWindowId": f"w{number}",
        "windowNumber": number,
    }
    if rng.random() < 0.2:
        management["windowNumber"] = -1  # damaged: drawn as any other entry
    return {
        "customType": "codex-context-window",
        "content": f"window {number}",
        "display": True,
        "details": {"protocol": 1, "id": f"m{number}", "contextManagement": management},
    }


def _entry_id(rng: random.Random, count: int, ids: list[str], hostile: bool) -> str:
    if hostile and ids and rng.random() < 0.05:
        return rng.choice(ids)  # a duplicated id
    if hostile and rng.random() < 0.01:
        return ""
    if rng.random() < 0.03:
        return f"s\ud800{count:x}"  # a lone surrogate, as Pi may write one
    if rng.random() < 0.02:
        return f"e\x1b]0;t\x07{count:x}"
    return f"{count:08x}"


def _fields(rng: random.Random, entry_type: str, ids: list[str], windows: int) -> dict[str, Any]:
    if entry_type == "message":
        roll = rng.random()
        if roll < 0.05:
            return {} if rng.random() < 0.5 else {"message": None}
        role = rng.choice(_ODD_ROLES if roll < 0.2 else _ROLES)
        message: dict[str, Any] = {"content": "x" * rng.randrange(0, 200), "timestamp": 1}
        if rng.random() < 0.1:
            message = {"content": "late role", "role": role}  # the role after other keys
        elif role is not None or rng.random() < 0.5:
            message = {"role": role, **message}
        return {"message": message}
    if entry_type == "custom":
        return {"customType": rng.choice(["ext", "ctxmodes-mode", 5]), "data": {"n": 1}}
    if entry_type == "custom_message":
        if rng.random() < 0.6:
            return _marker(rng, windows)
        return {"customType": "note", "content": "n", "display": False}
    if entry_type == "branch_summary":
        source = rng.choice(ids) if ids and rng.random() < 0.9 else "unknown"
        summary = rng.choice(["", f"## Goal\nGoal {len(ids)}\n", "plain text", None])
        return {"fromId": source, "summary": summary}
    if entry_type == "compaction":
        first_kept = rng.choice(ids) if ids else "none"
        return {"summary": "compacted", "firstKeptEntryId": first_kept, "tokensBefore": 100}
    if entry_type == "label":
        target = rng.choice(ids) if ids else "none"
        return {"targetId": target, "label": rng.choice(_LABELS)}
    if entry_type == "session_info":
        return {"name": rng.choice(["named", "  ", "n\x1b[1m", 5])}
    return {"thinkingLevel": "high"} if entry_type == "thinking_level_change" else {}


_TYPES = [
    ("message", 50),
    ("custom", 6),
    ("custom_message", 8),
    ("branch_summary", 6),
    ("compaction", 3),
    ("label", 8),
    ("session_info", 2),
    ("model_change", 2),
    ("thinking_level_change", 2),
]


def write_varied_session(path: Path, seed: int, count: int = 120, *, hostile: bool = False) -> None:
    """Write a session of about ``count`` entries, chosen by ``seed``."""
    rng = random.Random(seed)
    header = {"type": "session", "version": 3, "id": f"s{seed}", "timestamp": "t", "cwd": "/p"}
    lines = [json.dumps(header)]
    ids: list[str] = []
    windows = 0
    kinds, weights = zip(*_TYPES, strict=True)
    planned = [f"{position:08x}" for position in range(count)]
    for position in range(count):
        if rng.random() < 0.04:
            lines.append(rng.choice(_SKIPPED))
        entry_type = rng.choices(kinds, weights)[0]
        entry_id = _entry_id(rng, position, ids, hostile)
        roll = rng.random()
        if not ids or roll < 0.03:
            parent: Any = None
        elif roll < 0.2:
            parent = rng.choice(ids)  # a branch
        elif roll < 0.22:
            parent = rng.choice(["unknown", 5, ""])
        elif roll < 0.25:
            parent = rng.choice(planned[position:])  # written before its parent
        elif hostile and roll < 0.27:
            parent = entry_id
        else:
            parent = ids[-1]
        if entry_type == "custom_message":
            windows += 1
        entry = {
            "type": entry_type,
            "id": entry_id,
            "parentId": parent,
            "timestamp": rng.choice(_STAMPS),
            **_fields(rng, entry_type, ids, windows),
        }
        lines.append(json.dumps(entry, ensure_ascii=rng.random() < 0.7))
        ids.append(entry_id)
    text = "\n".join(lines) + "\n"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
