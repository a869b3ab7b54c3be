"""``/fork``: Pi's user message selector. Every user message of the session file, all
branches, in file order (RPC's ``get_fork_messages`` list), each on one line cut to the
terminal's width with its place under it (``Message 2 of 5``); it opens on the last one.
Enter continues in a new session file holding the path up to just before the chosen
message, with its text in the editor (``Forked to new session``), as Pi's ``/fork`` does;
↑ and ↓ wrap around; Esc or Ctrl+C closes it and nothing changes.

As in Pi, the selector opens also while the agent works, listing the messages the file
held then; choosing one aborts the run once the plugins let the fork go ahead (see
:func:`~ctxmodes.tui.session_copies.change_session_soon`). Messages still queued for the
run are dropped with it, as Pi drops them.

The fork goes through the host's session replacement (the one RPC's ``fork`` takes), so
plugins are asked first (``ctx_session_before_fork``, ``position="before"``) and one that
keeps the session leaves everything as it was, a run in progress going on. ``/fork ENTRY``,
which Pi does not have, stays the host's command and waits for an idle agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.host.errors import SessionChangeCancelled
from ctxmodes.host.fork_messages import ForkMessage, fork_messages
from ctxmodes.tui.key_hints import list_hint
from ctxmodes.tui.picker import Picker, PickerItem
from ctxmodes.tui.picker_keys import FORK_KEYS
from ctxmodes.tui.session_copies import change_session_soon
from ctxmodes.tui.text_wrap import truncate_to_width

if TYPE_CHECKING:
    from ctxmodes.tui.app import TerminalSession

#: Pi's title and the line under it.
TITLE: Final = "Fork from Message"
SUBTITLE: Final = (
    "Select a user message to copy the active path up to that point into a new session"
)
#: Pi's status lines.
NO_MESSAGES: Final = "No messages to fork from"
FORKED: Final = "Forked to new session"
#: Pi shows this many messages at once.
VISIBLE_MESSAGES: Final = 10
#: Pi's mark of the selected message.
CURSOR: Final = "\u203a "


def fork(session: TerminalSession, args: str) -> None:
    """``/fork``: the selector; ``/fork ENTRY``: the host's fork at (or before) ENTRY."""
    if args:
        from ctxmodes.tui.commands import submit_to_host

        submit_to_host(session, "fork", args)
        return
    open_fork_selector(session)


def open_fork_selector(session: TerminalSession) -> None:
    """Open the selector over the session's user messages; Pi's line when there are none."""
    try:
        messages = fork_messages(session.agent.session_manager)
    except CtxmodesError as error:  # a user message whose content is no text
        session.notify(str(error), "error")
        return
    if not messages:
        session.notify(NO_MESSAGES)
        return
    picker = Picker(
        f"{TITLE}\n{SUBTITLE}",
        lambda query: message_rows(messages, picker.width or session.width),
        lambda item: fork_before(session, str(item.key)),
        hint=list_hint(session.keymap, "fork", typed=False),
        filterable=False,
        letters_move=False,
        pages=False,
        key_order=FORK_KEYS,
        wraps=True,
        counted=False,
        visible_rows=VISIBLE_MESSAGES,
        cursor=CURSOR,
        selected_style="bold",
        selected=len(messages) - 1,
        fits_width=True,
    )
    picker.details = lambda: scroll_line(picker, len(messages))
    session.open_picker(picker)


def message_rows(messages: list[ForkMessage], width: int) -> list[PickerItem]:
    """One row per message, as Pi draws it: its text on one line (each line break a space,
    trimmed) cut to what ``width`` leaves after the mark, then its place, then a blank line;
    cut again when the terminal's width changes."""
    rows = []
    for number, message in enumerate(messages, 1):
        one_line = message.text.replace("\n", " ").strip()
        shown = truncate_to_width(one_line, width - len(CURSOR))
        place = f"\n  Message {number} of {len(messages)}"
        rows.append(
            PickerItem(
                message.entry_id,
                one_line,
                [("", shown), ("class:picker.hint", place), ("", "\n")],
            )
        )
    return rows


def scroll_line(picker: Picker, count: int) -> list[str]:
    """Pi's ``(3/12)`` under the rows when not all of them show."""
    if count <= VISIBLE_MESSAGES:
        return []
    return [f"  ({picker.selected + 1}/{count})"]


def fork_before(session: TerminalSession, entry_id: str) -> None:
    """Continue in a new session holding the path up to just before ``entry_id``; its text
    goes to the editor, replacing what was there, as in Pi."""
    agent = session.agent

    def job() -> None:
        try:
            text = agent.fork(entry_id, "before")
        except SessionChangeCancelled:
            return
        except CtxmodesError as error:
            agent.session.ui.notify(str(error), "error")
            return
        agent.session.ui.set_editor_text(text or "")
        agent.session.ui.notify(FORKED)

    change_session_soon(session, job)
