"""The active branch printed into the scrollback when the terminal opens a session or moves
in its tree, as it would have appeared live: prompts, replies, each tool call and result on
one line, compactions and archived windows one line each.

Bounded: the last :data:`DEFAULT_REPLAY_TURNS` turns (a turn starts at a user prompt or at an
archived window), with "… K earlier entries" above them. Reading goes back from the leaf and
decodes only the entries it prints.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ctxmodes.sdk import events as ev
from ctxmodes.session.models import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionEntry,
    CustomMessage,
    CustomMessageEntry,
    MessageEntry,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from ctxmodes.tui import render
from ctxmodes.windows.archive_line import branch_summary_line

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

DEFAULT_REPLAY_TURNS: Final = 10
#: However long its turns, a replay prints at most this many entries.
MAX_REPLAYED_ENTRIES: Final = 400


def _opens_turn(manager: SessionManager, entry_id: str, entry_type: object) -> bool:
    if entry_type == "branch_summary":
        return True
    if entry_type != "message":
        return False
    stored = manager.get_entry_json(entry_id) or {}
    message = stored.get("message")
    return isinstance(message, dict) and message.get("role") == "user"


def replay_start(manager: SessionManager, ids: list[str], types: list[object], turns: int) -> int:
    """Where the last ``turns`` turns of the branch begin (bounded by
    :data:`MAX_REPLAYED_ENTRIES`)."""
    floor = max(0, len(ids) - MAX_REPLAYED_ENTRIES)
    if turns <= 0:
        return len(ids)
    seen = 0
    for position in range(len(ids) - 1, floor - 1, -1):
        if _opens_turn(manager, ids[position], types[position]):
            seen += 1
            if seen == turns:
                return position
    return floor


def branch_blocks(
    manager: SessionManager,
    width: int,
    turns: int = DEFAULT_REPLAY_TURNS,
    hint_at: tuple[str, str] | None = None,
    notices: Callable[[str], str | None] | None = None,
) -> list[str]:
    """The scrollback blocks of the active branch's last ``turns`` turns; ``hint_at``: a
    branch summary just made, and the hint its line ends with (Pi's ``ctrl+o to
    expand``); ``notices``: the line (if any) that follows an entry, by its id."""
    ids = manager.get_branch_ids()
    types = manager.get_branch_types()
    start = replay_start(manager, ids, types, turns)
    blocks: list[str] = []
    if start:
        earlier = "1 earlier entry" if start == 1 else f"{start} earlier entries"
        blocks.append(render.styled(f"… {earlier}", "dim", width))
    for entry_id, entry_type in zip(ids[start:], types[start:], strict=True):
        hint = hint_at[1] if hint_at is not None and entry_id == hint_at[0] else None
        blocks.extend(_entry_blocks(manager, entry_id, entry_type, width, hint))
        notice = notices(entry_id) if notices is not None else None
        if notice is not None:
            blocks.append(render.notice(notice, "warning", width))
    return blocks


def _entry_blocks(
    manager: SessionManager, entry_id: str, entry_type: object, width: int, hint: str | None
) -> list[str]:
    if entry_type == "branch_summary":
        line = branch_summary_line(manager, manager.get_entry_json(entry_id) or {})
        shown = f"• {line} ({hint})" if hint is not None else f"• {line}"
        return [render.styled(shown, "magenta", width)]
    if entry_type not in ("message", "custom_message", "compaction"):
        return []
    entry = manager.get_entry(entry_id)
    if isinstance(entry, CompactionEntry):
        return [render.compaction_line(entry, width, None)]
    if isinstance(entry, CustomMessageEntry):
        return _custom_blocks(entry, width)
    if isinstance(entry, MessageEntry):
        return _message_blocks(entry, width, Path(manager.cwd))
    return []


def _custom_blocks(entry: CustomMessageEntry, width: int) -> list[str]:
    message = CustomMessage(
        custom_type=entry.custom_type,
        content=entry.content,
        display=entry.display,
        details=entry.details,
        timestamp=None,
    )
    number = ev.window_number(message)
    if number is not None:
        return [render.window_line(number, False, width)] if number > 0 else []
    if not entry.display:
        return []
    return [render.custom_message(entry.custom_type, ev.message_text(message), width)]


def _message_blocks(entry: MessageEntry, width: int, cwd: Path) -> list[str]:
    message = entry.message
    if isinstance(message, UserMessage):
        text, images = ev.message_text(message), ev.image_types(message)
        return render.prompt_blocks(text, width, images, None)[0]
    if isinstance(message, AssistantMessage):
        blocks: list[str] = []
        reply = render.assistant_reply(message, width)
        if reply is not None:
            blocks.append(reply)
        blocks.extend(
            render.tool_call(block.name, block.arguments, width, None, cwd)
            for block in message.content
            if isinstance(block, ToolCall)
        )
        ending = render.reply_ending(message, width)
        if ending is not None:
            blocks.append(ending)
        return blocks
    if isinstance(message, ToolResultMessage):
        text = ev.message_text(message)
        # Ctrl+O shows what ran since the session was opened: no key is named here.
        result = render.tool_result(
            message.tool_name, text, message.details, message.is_error, width, None
        )
        return [result] if result is not None else []
    if isinstance(message, BashExecutionMessage):
        return [render.shell_command(message, width, None)]
    return []
