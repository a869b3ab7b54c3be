"""What the resume picker draws: one row per session, its hint line and the line it shows
when no session is listed, with Pi's words (``session-selector.js``)."""

from __future__ import annotations

import os
from typing import Final, Literal

from ctxmodes.tui.heads import SessionHead
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.picker import PickerItem

Scope = Literal["current", "all"]

#: The fewest characters of a session id the picker shows.
SHORT_ID_CHARS: Final = 8


def distinct_prefixes(ids: list[str], minimum: int = SHORT_ID_CHARS) -> dict[str, str]:
    """Each id's shortest beginning (at least ``minimum`` characters) that no other id of
    ``ids`` shares: session ids made in the same minute share their first characters, so
    the part shown must go on to where they differ (and is what ``--session`` takes)."""
    ordered = sorted(set(ids))
    shown: dict[str, str] = {}
    for position, session_id in enumerate(ordered):
        length = minimum
        for neighbour in ordered[max(0, position - 1) : position + 2]:
            if neighbour == session_id:
                continue
            common = next(
                (i for i, (a, b) in enumerate(zip(session_id, neighbour, strict=False)) if a != b),
                min(len(session_id), len(neighbour)),
            )
            length = max(length, common + 1)
        shown[session_id] = session_id[:length]
    return shown


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


def head_row(
    head: SessionHead,
    short_id: str | None = None,
    *,
    tree: str = "",
    path_shown: bool = False,
    folder_shown: bool = False,
) -> PickerItem:
    """One session's row; ``tree``: the threaded list's drawing before it; ``path_shown``:
    its file is named, as Pi's Ctrl+P does; ``folder_shown``: its working directory is, as
    Pi's rows of every folder's sessions do (both shortened to ``~`` under home)."""
    folder = f"  {shorten_home(head.cwd)}" if folder_shown and head.cwd else ""
    where = f"  {shorten_home(str(head.path))}" if path_shown else ""
    fragments = [
        ("class:picker.hint", f"{head.when()}  {tree}"),
        ("", head.title[:70]),
        (
            "class:picker.hint",
            f"  {short_id or head.id[:SHORT_ID_CHARS]}  {head.size // 1024} KiB{folder}{where}",
        ),
    ]
    # The row's text is its head's (a session's messages may be many megabytes, and the
    # picker's search is ``search_text``, not this).
    return PickerItem(head.path, f"{head.id} {head.name or ''} {head.first_message}", fragments)


def picker_hint(keymap: KeyMap, path_shown: bool) -> str:
    """Pi's two hint lines as one: Tab and the search's forms, then the picker's keys as
    the keymap binds them (an action without a key left out), then ours to resume and
    cancel."""
    parts = ["tab scope", 're:<pattern> regex · "phrase" exact']
    for action, what in (
        ("app.session.toggleSort", "sort"),
        ("app.session.toggleNamedFilter", "named"),
        ("app.session.delete", "delete"),
        ("app.session.togglePath", f"path {'(on)' if path_shown else '(off)'}"),
        ("app.session.rename", "rename"),
    ):
        if keymap.text(action):
            parts.append(f"{keymap.text(action)} {what}")
    return " · ".join([*parts, "Enter resume", "Esc cancel"])


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
