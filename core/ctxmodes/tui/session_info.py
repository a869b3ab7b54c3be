"""A session as Pi's session list knows it once the file is read whole (its
``buildSessionInfo``): the text of every user and assistant message, which the resume
picker's search matches; when it was last active (the latest message's time, else the
header's, else the file's), by which Pi orders the list; its name, first message and
number of message entries.

Reading a file whole is slow for a long session, so the picker lists heads first (see
:mod:`ctxmodes.tui.heads`) and reads the files in the background."""

from __future__ import annotations

import dataclasses
import os
from datetime import datetime
from typing import Any, Final

import orjson

from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.regular_file import open_regular
from ctxmodes.tui.heads import SessionHead

_CHATTING_ROLES: Final = ("user", "assistant")


class _NotASession(Exception):
    """Pi's reading of the file fails (its list then leaves the file out)."""


def _date_ms(value: Any) -> int | None:
    """``new Date(value).getTime()`` for the ISO times sessions hold; ``None`` for NaN."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.astimezone()  # JavaScript reads a time without a zone as local time
    return int(when.timestamp() * 1000)


def _block_text(block: Any) -> str:
    """A text block's text as JavaScript's ``join`` writes it."""
    text = block.get("text")
    if text is None:
        return ""
    return text if isinstance(text, str) else orjson.dumps(text).decode()


def _text_of(content: Any) -> str:
    """Pi's ``extractTextContent``: a string, or the text blocks joined by spaces."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or None in content:
        raise _NotASession  # Pi calls .filter on it, then reads each block's type
    blocks = [block for block in content if isinstance(block, dict)]
    return " ".join(_block_text(block) for block in blocks if block.get("type") == "text")


@dataclasses.dataclass
class _Reading:
    name: str | None = None
    first_message: str = ""
    last_activity: int | None = None
    message_count: int = 0
    texts: list[str] = dataclasses.field(default_factory=list)

    def take(self, entry: dict[str, Any]) -> None:
        if entry.get("type") == "session_info":
            name = entry.get("name")
            if name is not None and not isinstance(name, str):
                raise _NotASession  # Pi calls .trim() on it
            self.name = js_trim(name) or None if name is not None else None
        if entry.get("type") != "message":
            return
        self.message_count += 1  # every message entry, whatever it holds
        message = entry.get("message")
        if message is None:
            raise _NotASession  # Pi reads its role
        if not isinstance(message, dict):
            return  # Pi finds no role on it
        if not isinstance(message.get("role"), str) or "content" not in message:
            return
        if message["role"] not in _CHATTING_ROLES:
            return
        stamp = message.get("timestamp")
        activity = stamp if isinstance(stamp, int | float) and not isinstance(stamp, bool) else None
        if activity is None:
            activity = _date_ms(entry.get("timestamp"))
        if activity is not None:
            self.last_activity = max(self.last_activity or 0, int(activity))
        text = _text_of(message["content"])
        if not text:
            return
        self.texts.append(text)
        if not self.first_message and message["role"] == "user":
            self.first_message = text


def read_session_info(head: SessionHead) -> SessionHead | None:
    """``head`` completed from its whole file, as Pi reads it (a line that is not JSON is
    skipped); ``None`` when Pi would leave the file out of its list."""
    reading = _Reading()
    header: dict[str, Any] | None = None
    try:
        with open_regular(head.path) as stream:
            mtime_ms = os.fstat(stream.fileno()).st_mtime_ns // 1_000_000
            for line in stream:
                if not line.strip():
                    continue
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if header is None:
                    if not isinstance(entry, dict) or entry.get("type") != "session":
                        return None
                    header = entry
                elif isinstance(entry, dict):
                    reading.take(entry)
    except (OSError, ValueError, _NotASession):
        return None
    if header is None:
        return None
    modified_ms = reading.last_activity or _date_ms(header.get("timestamp"))
    if modified_ms is None:
        modified_ms = mtime_ms
    return dataclasses.replace(
        head,
        modified=modified_ms / 1000,
        name=reading.name,
        first_message=reading.first_message,
        message_count=reading.message_count,
        messages_text=" ".join(reading.texts),
    )
