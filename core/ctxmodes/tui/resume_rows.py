"""What the resume picker draws: one row per session, its hint lines and the line it shows
when no session is listed, with Pi's words and layout (``session-selector.js``)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final, Literal

from ctxmodes.session.jsvalues import js_trim
from ctxmodes.tui.heads import SessionHead
from ctxmodes.tui.key_hints import CANCEL, CONFIRM, key_hint
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.picker import PickerItem
from ctxmodes.tui.text_wrap import text_cells, truncate_to_width

Scope = Literal["current", "all"]

#: Pi's mark of the selected row; the others start with as many spaces.
CURSOR: Final = "\u203a "
#: The fewest cells Pi leaves a session's name or first message, however narrow the
#: terminal (the row is then cut at its end instead).
MESSAGE_MIN_CELLS: Final = 10
#: How Pi ends a row too wide for the terminal.
_ROW_ELLIPSIS: Final = "..."
_CONTROL_CHARACTERS: Final = re.compile(r"[\x00-\x1f\x7f]")
#: Pi's ages: under a minute ``now``, then the whole minutes, hours, days, weeks (under 30
#: days), months of 30 days (under 365) and years of 365 days.
_MINUTE_MS: Final = 60_000
_HOUR_MS: Final = 3_600_000
_DAY_MS: Final = 86_400_000


def format_age(modified_ms: int, now_ms: int) -> str:
    """How long ago ``modified_ms`` was at ``now_ms``, as Pi's session list writes it
    (``now``, ``5m``, ``3h``, ``2d``, ``1w``, ``4mo``, ``1y``)."""
    elapsed = now_ms - modified_ms
    minutes, hours, days = elapsed // _MINUTE_MS, elapsed // _HOUR_MS, elapsed // _DAY_MS
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{minutes}m"
    if hours < 24:
        return f"{hours}h"
    if days < 7:
        return f"{days}d"
    if days < 30:
        return f"{days // 7}w"
    if days < 365:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def search_text(head: SessionHead) -> str:
    """What typing matches, as Pi's ``getSessionSearchText``: the id, name, text of every
    message and working directory; the first message stands in for the messages until the
    file is read whole."""
    messages = head.messages_text if head.messages_text is not None else head.first_message
    return f"{head.id} {head.name or ''} {messages} {head.cwd}"


def shorten_home(path: str) -> str:
    """Pi's ``shortenPath``: a path starting with the home directory has it written ``~``."""
    home = os.path.expanduser("~")
    if home not in ("", "~") and path.startswith(home):
        return "~" + path[len(home) :]
    return path


@dataclass(frozen=True, slots=True)
class RowLook:
    """What a row shows beside its session: ``tree``, the threaded list's drawing before it;
    ``folder_shown``, its working directory, as Pi's rows of every folder's sessions do;
    ``path_shown``, its file, as Pi's Ctrl+P does; ``current``, whether it is the session
    being run (drawn as Pi draws it)."""

    tree: str = ""
    folder_shown: bool = False
    path_shown: bool = False
    current: bool = False


def head_row(head: SessionHead, width: int, now_ms: int, look: RowLook = RowLook()) -> PickerItem:
    """One session's row as Pi's session selector draws it in ``width`` columns (the mark
    before it, which the picker draws, included): the tree, the name or first message cut
    with ``…`` to what the right part leaves (never under ten cells), then at the right the
    file (``path_shown``), the folder (``folder_shown``), the number of messages and the
    age at ``now_ms``; a row still too wide is cut with ``...``, the right part first. A
    named session is drawn as Pi draws a name, the current one as Pi marks it."""
    text = js_trim(_CONTROL_CHARACTERS.sub(" ", head.title))
    right = f"{head.message_count} {format_age(head.modified_ms, now_ms)}"
    if look.folder_shown and head.cwd:
        right = f"{shorten_home(head.cwd)} {right}"
    if look.path_shown:
        right = f"{shorten_home(str(head.path))} {right}"
    room = width - len(CURSOR) - text_cells(look.tree) - (text_cells(right) + 2)
    message = truncate_to_width(text, max(MESSAGE_MIN_CELLS, room), "…")
    left = text_cells(CURSOR) + text_cells(look.tree) + text_cells(message)
    spacing = " " * max(1, width - left - text_cells(right))
    style = "class:picker.session"
    if look.current:
        style += " class:picker.active"
    elif head.name:
        style += " class:picker.warning"
    pieces = [
        ("class:picker.dim", look.tree),
        (style, message),
        ("", spacing),
        ("class:picker.dim", right),
    ]
    # The row's text is its head's (a session's messages may be many megabytes, and the
    # picker's search is ``search_text``, not this).
    text_searched = f"{head.id} {head.name or ''} {head.first_message}"
    return PickerItem(head.path, text_searched, cut_pieces(pieces, width - len(CURSOR)))


def cut_pieces(pieces: list[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """Styled ``pieces`` as one line cut to ``width`` cells as Pi cuts a row: when wider,
    what fits before ``...`` and then ``...`` (in the style of the piece it cuts); uncut,
    the pieces as they are (an empty one kept: a row's first piece is its tree)."""
    if sum(text_cells(text) for _, text in pieces) <= width:
        return pieces
    room = max(0, width - len(_ROW_ELLIPSIS))
    kept: list[tuple[str, str]] = []
    for style, text in pieces:
        fitting = truncate_to_width(text, room, "") if text_cells(text) > room else text
        if fitting:
            kept.append((style, fitting))
        room -= text_cells(fitting)
        if fitting != text:
            kept.append((style, _ROW_ELLIPSIS[: max(0, width)]))
            break
    return kept


def hint_lines(keymap: KeyMap, path_shown: bool, width: int) -> list[str]:
    """Pi's two hint lines, each cut with ``…`` to ``width``: the scope key and the search's
    forms, then the picker's keys as the keymap binds them (an action bound to no key shows its
    word alone, as Pi's does)."""
    first = f'{keymap.text("tui.input.tab")} scope · re:<pattern> regex · "phrase" exact'
    second = " · ".join(
        f"{keymap.text(action)} {what}"
        for action, what in (
            ("app.session.toggleSort", "sort"),
            ("app.session.toggleNamedFilter", "named"),
            ("app.session.delete", "delete"),
            ("app.session.togglePath", f"path {'(on)' if path_shown else '(off)'}"),
            ("app.session.rename", "rename"),
        )
    )
    return [truncate_to_width(first, width, "…"), truncate_to_width(second, width, "…")]


def delete_question(keymap: KeyMap) -> str:
    """Pi's question before a delete, with the keys bound to answer it."""
    confirm, cancel = key_hint(keymap, CONFIRM, "confirm"), key_hint(keymap, CANCEL, "cancel")
    return f"Delete session? {confirm} · {cancel}"


def empty_line(keymap: KeyMap, scope: Scope, named_only: bool) -> str:
    """Pi's line for an empty list, which tells what would list more."""
    if named_only:
        toggle = keymap.text("app.session.toggleNamedFilter")
        if scope == "all":
            return f"  No named sessions found. Press {toggle} to show all."
        return (
            f"  No named sessions in current folder. Press {toggle} to show all,"
            " or Tab to view all."
        )
    if scope == "all":
        return "  No sessions found"
    return "  No sessions in current folder. Press Tab to view all."
