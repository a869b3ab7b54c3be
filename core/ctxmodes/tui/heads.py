"""What the resume picker knows about a session without reading it: the header, the first
user message (both near the start of the file), the name (the last ``session_info`` entry,
found by searching the mapped file backwards), the number of messages (the lines that
start as a message entry, counted in the mapped file) and the modification time.

A directory of a thousand sessions, one of them 100 MB, lists in a fraction of a second:
per file, one small read and two byte searches. Reading files whole, for the text of every
message and Pi's exact count, is separate (:mod:`ctxmodes.tui.session_info`).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.regular_file import open_regular

#: How much of a file's start is read for its header and first user message.
HEAD_BYTES: Final = 64 * 1024
_SESSION_INFO: Final = b'"type":"session_info"'
#: How a message entry's line starts as Pi and ctxmodes write it (``type`` first); the
#: header is the first line, so every message line follows a line break.
_MESSAGE_LINE: Final = b'\n{"type":"message"'
#: What Pi's list shows for a session without a user message's text.
NO_MESSAGES: Final = "(no messages)"


@dataclass(frozen=True, slots=True)
class SessionHead:
    path: Path
    id: str
    cwd: str
    modified: float
    size: int
    name: str | None
    first_message: str
    #: The session this one was forked from (the header's ``parentSession``), as written.
    parent_session: str | None = None
    #: Its message entries, of every role, as Pi's list counts them.
    message_count: int = 0
    #: The text of all its user and assistant messages, once the file is read whole (see
    #: :mod:`ctxmodes.tui.session_info`); ``None`` until then.
    messages_text: str | None = None

    @property
    def modified_ms(self) -> int:
        """When it was last modified, in whole milliseconds, as Pi compares the times."""
        return round(self.modified * 1000)

    @property
    def title(self) -> str:
        """What Pi's list names the session by: its name, else its first user message
        (:data:`NO_MESSAGES` without one)."""
        return self.name or self.first_message or NO_MESSAGES


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


def _first_user_message(lines: list[bytes]) -> str:
    for line in lines:
        if b'"role":"user"' not in line:
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text(message.get("content"))
            if text:  # Pi's first message is the first user message with text
                return text
    return ""


def _last_name(mapped: mmap.mmap) -> str | None:
    found = mapped.rfind(_SESSION_INFO)
    if found < 0:
        return None
    start = mapped.rfind(b"\n", 0, found) + 1
    end = mapped.find(b"\n", found)
    try:
        entry = orjson.loads(mapped[start : end if end >= 0 else len(mapped)])
    except orjson.JSONDecodeError:
        return None
    name = entry.get("name") if isinstance(entry, dict) else None
    return js_trim(name) or None if isinstance(name, str) else None


def _count_messages(mapped: mmap.mmap) -> int:
    count = 0
    found = mapped.find(_MESSAGE_LINE)
    while found >= 0:
        count += 1
        found = mapped.find(_MESSAGE_LINE, found + len(_MESSAGE_LINE))
    return count


def read_head(path: Path) -> SessionHead | None:
    """The head of one session file; ``None`` when it is not a readable session."""
    try:
        with open_regular(path) as stream:
            info = os.fstat(stream.fileno())
            head = stream.read(HEAD_BYTES)
            lines = head.split(b"\n")
            if len(lines) > 1:
                lines = lines[:-1]  # the last piece may be cut short
            header = orjson.loads(lines[0])
            if not isinstance(header, dict) or header.get("type") != "session":
                return None
            name = None
            count = 0
            if info.st_size:
                with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    name = _last_name(mapped)
                    count = _count_messages(mapped)
    except (OSError, ValueError):
        return None
    return SessionHead(
        path=path,
        id=str(header.get("id", "")),
        cwd=str(header.get("cwd", "")),
        modified=info.st_mtime_ns // 1_000_000 / 1000,
        size=info.st_size,
        name=name,
        first_message=_first_user_message(lines[1:]),
        parent_session=parent if isinstance(parent := header.get("parentSession"), str) else None,
        message_count=count,
    )


def list_heads(directory: Path) -> list[SessionHead]:
    """The sessions of ``directory``, most recently modified first."""
    try:
        names = [name for name in os.listdir(directory) if name.endswith(".jsonl")]
    except OSError:
        return []
    heads = [head for name in names if (head := read_head(directory / name)) is not None]
    heads.sort(key=lambda head: head.modified, reverse=True)
    return heads


def list_every_folder(root: Path) -> list[SessionHead]:
    """The sessions of every folder in ``root`` (Pi's sessions folder, one folder per
    project), most recently modified first; a folder that cannot be read adds none."""
    try:
        folders = [entry.path for entry in os.scandir(root) if entry.is_dir() or entry.is_symlink()]
    except OSError:
        return []
    heads = [head for folder in folders for head in list_heads(Path(folder))]
    heads.sort(key=lambda head: head.modified, reverse=True)
    return heads
