"""Finding and summarising session files the way Pi's session picker does."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from ctxmodes.session import codec
from ctxmodes.session.ids import timestamp_ms
from ctxmodes.session.jsvalues import js_trim, js_truthy
from ctxmodes.session.paths import resolve_path
from ctxmodes.session.regular_file import open_regular

__all__ = [
    "SessionInfo",
    "find_most_recent_session",
    "list_session_files",
    "list_sessions_in",
    "read_header",
    "read_session_info",
]

# Header discovery reads at most this much, like Pi (larger headers: the file is skipped).
_MAX_HEADER_SCAN_BYTES: Final = 1024 * 1024


class SessionInfo(BaseModel):
    """One session as listed by Pi (``SessionInfo``)."""

    model_config = ConfigDict(frozen=True)

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: datetime | None
    modified: datetime
    message_count: int
    first_message: str
    all_messages_text: str


def _parse(line: bytes) -> Any:
    if not line.strip():
        return None
    try:
        return codec.loads(line)
    except codec.JsonDecodeError:
        return None


def read_header(path: Path) -> dict[str, Any] | None:
    """The session header of ``path`` if its first parsed line (within 1 MiB) is one."""
    try:
        with open_regular(path) as stream:
            data = stream.read(_MAX_HEADER_SCAN_BYTES + 1)
    except OSError:
        return None
    lines = data.split(b"\n")
    if len(data) > _MAX_HEADER_SCAN_BYTES:
        lines.pop()
    for line in lines:
        value = _parse(line)
        if not js_truthy(value):
            continue
        if isinstance(value, dict) and value.get("type") == "session":
            return value if isinstance(value.get("id"), str) else None
        return None
    return None


def recorded_directory(path: Path) -> Path | None:
    """The working directory the session at ``path`` records, resolved (a relative one from
    the current directory, as Pi takes it), when it names a directory that exists."""
    header = read_header(path)
    recorded = header.get("cwd") if header is not None else None
    if not isinstance(recorded, str) or not recorded or not Path(recorded).is_dir():
        return None
    return Path(recorded).resolve()


def _cwd_matches(cwd: Any, resolved_cwd: str) -> bool:
    return isinstance(cwd, str) and cwd != "" and resolve_path(cwd) == resolved_cwd


def list_session_files(directory: Path) -> list[Path]:
    """The ``*.jsonl`` files of ``directory`` (none if it cannot be read)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return [directory / name for name in names if name.endswith(".jsonl")]


def find_most_recent_session(directory: Path, cwd: str | None = None) -> Path | None:
    """The most recently modified session file in ``directory`` (optionally for ``cwd``)."""
    resolved_cwd = resolve_path(cwd) if cwd else None
    candidates: list[tuple[float, Path]] = []
    for path in list_session_files(directory):
        header = read_header(path)
        if header is None:
            continue
        if resolved_cwd is not None and not _cwd_matches(header.get("cwd"), resolved_cwd):
            continue
        try:
            candidates.append((path.stat().st_mtime, path))
        except OSError:
            continue
    if not candidates:
        return None
    candidates.sort(key=lambda item: item[0], reverse=True)
    return candidates[0][1]


def _text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return " ".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _to_datetime(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def read_session_info(path: Path) -> SessionInfo | None:
    """Summarise one session file; ``None`` if it is not a session or cannot be read."""
    try:
        return _read_session_info(path)
    except (OSError, KeyError, TypeError, AttributeError, ValueError, OverflowError):
        # As in Pi, a file that cannot be summarised is left out of the listing.
        return None


def _read_session_info(path: Path) -> SessionInfo | None:
    stat = path.stat()
    header: dict[str, Any] | None = None
    message_count = 0
    first_message = ""
    texts: list[str] = []
    name: str | None = None
    last_activity: float | None = None
    with open_regular(path) as stream:
        for raw in stream:
            entry = _parse(raw.rstrip(b"\n"))
            if not js_truthy(entry):
                continue
            if not isinstance(entry, dict):
                if header is None:
                    return None
                continue
            if header is None:
                if entry.get("type") != "session":
                    return None
                header = entry
                continue
            if entry.get("type") == "session_info":
                value = entry.get("name")
                name = (js_trim(value) or None) if value is not None else None
            if entry.get("type") != "message":
                continue
            message_count += 1
            message: Any = entry.get("message")
            if not (isinstance(message.get("role"), str) and "content" in message):
                continue
            if message["role"] not in ("user", "assistant"):
                continue
            timestamp = message.get("timestamp")
            activity = (
                timestamp
                if isinstance(timestamp, int | float) and not isinstance(timestamp, bool)
                else timestamp_ms(entry.get("timestamp"))
            )
            if activity is not None:
                last_activity = max(last_activity or 0, activity)
            text = _text_of(message)
            if not text:
                continue
            texts.append(text)
            if not first_message and message["role"] == "user":
                first_message = text
    if header is None:
        return None
    header_ms = timestamp_ms(header.get("timestamp"))
    if last_activity is not None and last_activity > 0:
        modified = _to_datetime(last_activity)
    elif header_ms is not None:
        modified = _to_datetime(header_ms)
    else:
        modified = datetime.fromtimestamp(stat.st_mtime, UTC)
    cwd = header.get("cwd")
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=cwd if isinstance(cwd, str) else "",
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=_to_datetime(header_ms) if header_ms is not None else None,
        modified=modified,
        message_count=message_count,
        first_message=first_message or "(no messages)",
        all_messages_text=" ".join(texts),
    )


def list_sessions_in(directory: Path, cwd: str | None = None) -> list[SessionInfo]:
    """Summaries of the sessions in ``directory``, most recently active first."""
    resolved_cwd = resolve_path(cwd) if cwd else None
    infos = [info for path in list_session_files(directory) if (info := read_session_info(path))]
    if resolved_cwd is not None:
        infos = [info for info in infos if _cwd_matches(info.cwd, resolved_cwd)]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos
