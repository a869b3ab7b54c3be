"""The user messages a fork can start before, as Pi lists them for its ``/fork`` selector
and RPC's ``get_fork_messages`` (``getUserMessagesForForking``): every branch's, in file
order, each with its text blocks joined; one without text is left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxmodes.compaction.serialize import content_text

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager


@dataclass(frozen=True, slots=True)
class ForkMessage:
    """A user message to fork before: its entry's id and its text."""

    #: As the file holds it: a string in any file Pi or ctxmodes wrote.
    entry_id: Any
    text: str


def fork_messages(manager: SessionManager) -> list[ForkMessage]:
    """The user messages of every entry of ``manager``'s file, in file order.

    :raises MalformedMessageError: a user message's content is neither text nor blocks.
    """
    messages: list[ForkMessage] = []
    for entry in manager.get_entries_json():
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        if message.get("role") != "user":
            continue
        entry_id = entry.get("id")
        text = content_text(message.get("content"), "", f"entry {entry_id}")
        if text:
            messages.append(ForkMessage(entry_id, text))
    return messages
