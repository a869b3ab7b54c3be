"""Session files as the TypeScript extension (or an older ctxmodes) leaves them: the formats of
``original-extension.md`` written out line by line, with no mode entry.

Each builder returns the path of a version 3 Pi session file for one mode's records: Tree's
archive topology (branch summary, manifest, note snapshot, window marker), Local's window
markers, Remote's encrypted history and notes results, or a plain Pi conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmodes.session.manager import SessionManager

if TYPE_CHECKING:
    from ctxmodes.modes import Evidence, ModeSpec

USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


class _File:
    """Appends entries in Pi's key order, each the child of the previous one unless told."""

    def __init__(self, path: Path, cwd: Path) -> None:
        self.path = path
        self.lines: list[dict[str, Any]] = [
            {
                "type": "session",
                "version": 3,
                "id": f"ext-{path.stem}",
                "timestamp": "2026-03-01T09:00:00.000Z",
                "cwd": str(cwd),
            }
        ]
        self.leaf: str | None = None
        self.count = 0

    def _stamp(self, parent: str | None) -> dict[str, Any]:
        self.count += 1
        return {
            "id": f"{self.count:08x}",
            "parentId": parent,
            "timestamp": f"2026-03-01T09:00:{self.count:02d}.000Z",
        }

    def add(self, head: dict[str, Any], tail: dict[str, Any], parent: str | None = "leaf") -> str:
        stamp = self._stamp(self.leaf if parent == "leaf" else parent)
        self.lines.append({**head, **stamp, **tail})
        self.leaf = stamp["id"]
        return self.leaf

    def message(self, message: dict[str, Any], parent: str | None = "leaf") -> str:
        return self.add({"type": "message"}, {"message": message}, parent)

    def user(self, text: str) -> str:
        content = [{"type": "text", "text": text}]
        return self.message({"role": "user", "content": content, "timestamp": 1})

    def assistant(self, text: str, calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()) -> str:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [
            {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            for call_id, name, arguments in calls
        ]
        return self.message(
            {
                "role": "assistant",
                "content": content,
                "api": "openai-responses",
                "provider": "openai",
                "model": "gpt-5",
                "usage": USAGE,
                "stopReason": "toolUse" if calls else "stop",
                "timestamp": 2,
            }
        )

    def tool_result(self, call_id: str, name: str, text: str, details: Any) -> str:
        return self.message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "details": details,
                "isError": False,
                "timestamp": 3,
            }
        )

    def marker(self, number: int, current: str, previous: str | None = None) -> str:
        management: dict[str, Any] = {
            "protocol": 1,
            "kind": "window",
            "firstWindowId": "window-0",
            "currentWindowId": current,
        }
        if previous is not None:
            management["previousWindowId"] = previous
        management["windowNumber"] = number
        if number:
            management["trimPreviousWindow"] = True
        content = (
            "<context_window>\nAgent name: /root\nFirst context window id: window-0\n"
            f"Current context window id: {current}\n</context_window>"
        )
        return self.add(
            {"type": "custom_message", "customType": "codex-context-window"},
            {
                "content": content,
                "display": True,
                "details": {
                    "protocol": 1,
                    "id": f"marker-{number}",
                    "contextManagement": management,
                },
            },
        )

    def custom(self, custom_type: str, data: dict[str, Any]) -> str:
        return self.add({"type": "custom", "customType": custom_type, "data": data}, {})

    def write(self) -> Path:
        self.path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return self.path


def tree_file(directory: Path) -> Path:
    """Window 0 archived as a side branch with a summary, window 1 current."""
    file = _File(directory / "extension-tree.jsonl", directory)
    base = file.user("Prepare the release")
    boundary = file.marker(0, "window-0")
    file.user("Pick a code name")
    file.assistant("Noted; rolling over.", (("call-1", "new_context", {}),))
    archived_leaf = file.tool_result(
        "call-1", "new_context", "A new context window will start.", {}
    )
    summary = file.add(
        {"type": "branch_summary"},
        {
            "fromId": archived_leaf,
            "summary": "The user explored a different conversation branch before returning "
            "here.\nSummary of that exploration:\n\n## Goal\nPick the release code name\n\n"
            "## Progress\n- chose AMBER",
        },
        parent=base,
    )
    file.custom(
        "codex-context-tree-archive",
        {
            "protocol": 1,
            "strategy": "codex-context-tree",
            "windowId": "window-0",
            "boundaryEntryId": boundary,
            "summaryEntryId": summary,
            "archivedLeafId": archived_leaf,
            "branchBaseId": base,
        },
    )
    file.custom("codex-context-note-snapshot", {"protocol": 1, "timestamp": 5, "files": []})
    file.marker(1, "window-1", "window-0")
    file.user("Write the changelog")
    file.assistant("Changelog written.")
    return file.write()


def local_file(directory: Path) -> Path:
    """Two windows on one branch."""
    file = _File(directory / "extension-local.jsonl", directory)
    file.user("Prepare the release")
    file.marker(0, "window-0")
    file.assistant("Rolling over.", (("call-1", "new_context", {}),))
    file.tool_result("call-1", "new_context", "A new context window will start.", {})
    file.marker(1, "window-1", "window-0")
    file.user("Write the changelog")
    file.assistant("Changelog written.")
    return file.write()


def remote_file(directory: Path) -> Path:
    """A window whose notes write the Remote service answered with ciphertext."""
    file = _File(directory / "extension-remote.jsonl", directory)
    file.marker(0, "window-0")
    file.user("Remember the code name")
    arguments = {"action": "write_file", "path": "name.md", "text": "AMBER"}
    file.assistant("Saving it.", (("call-1", "notes", arguments),))
    details = {"codexHistoryNotes": {"encrypted_output": "gAAAA-ciphertext"}}
    file.tool_result("call-1", "notes", "notes operation completed", details)
    file.assistant("Saved.")
    return file.write()


def plain_file(directory: Path) -> Path:
    """A Pi conversation no mode managed."""
    file = _File(directory / "plain-pi.jsonl", directory)
    file.user("Hello")
    file.assistant("Hi.")
    return file.write()


#: Builders by the mode a file of theirs must be inferred as (``None``: the default).
EXTENSION_FILES: dict[str | None, Callable[[Path], Path]] = {
    "tree": tree_file,
    "local": local_file,
    "remote": remote_file,
    None: plain_file,
}


def recognized_by(spec: ModeSpec, directory: Path) -> dict[str | None, Evidence | None]:
    """What ``spec``'s recognizer says of each builder's file (keyed as
    :data:`EXTENSION_FILES`)."""
    assert spec.recognize is not None
    said: dict[str | None, Evidence | None] = {}
    for made_by, build in EXTENSION_FILES.items():
        where = directory / (made_by or "plain")
        where.mkdir()
        with SessionManager.open(build(where), read_only=True) as view:
            said[made_by] = spec.recognize(view)
    return said


def leaving_words(spec: ModeSpec, directory: Path) -> dict[str, str | None]:
    """What ``spec`` says before a session of its own file is switched to each other
    built-in mode and to a third party's (``recent-turns``), keyed by the target."""
    assert spec.describe_switch is not None
    targets = [name for name in ("off", "local", "tree", "remote") if name != spec.name]
    with SessionManager.open(EXTENSION_FILES[spec.name](directory), read_only=True) as view:
        return {target: spec.switch_words(view, target) for target in [*targets, "recent-turns"]}
