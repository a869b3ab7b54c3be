"""What the resume picker knows about a session without reading it: the header, the first
user message (both near the start of the file), the name (the last ``session_info`` entry,
found by searching the mapped file backwards) and the modification time.

A directory of a thousand sessions, one of them 100 MB, lists in a fraction of a second:
per file, one small read and one backwards byte search. Reading files whole, for the
text of every message, is separate (:mod:`ctxmodes.tui.session_info`).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import orjson

from ctxmodes.session.regular_file import open_regular

#: How much of a file's start is read for its header and first user message.
HEAD_BYTES: Final = 64 * 1024
_SESSION_INFO: Final = b'"type":"session_info"'


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
    #: The text of all its user and assistant messages, once the file is read whole (see
    #: :mod:`ctxmodes.tui.session_info`); ``None`` until then.
    messages_text: str | None = None

    @property
    def modified_ms(self) -> int:
        """When it was last modified, in whole milliseconds, as Pi compares the times."""
        return round(self.modified * 1000)

    @property
    def title(self) -> str:
        return self.name or " ".join(self.first_message.split()) or "(no messages)"

    def when(self) -> str:
        return datetime.fromtimestamp(self.modified).strftime("%Y-%m-%d %H:%M")


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
            return _text(message.get("content"))
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
    return name.strip() or None if isinstance(name, str) else None


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
            if info.st_size:
                with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    name = _last_name(mapped)
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
