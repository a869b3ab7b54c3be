"""Asking, in the session, whether to continue a stored session whose working directory is
gone (a project moved or removed) in the current one, as Pi asks on ``/resume`` and
``/import``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ctxmodes.tui.key_hints import selector_hint
from ctxmodes.tui.picker import Picker, PickerItem

if TYPE_CHECKING:
    from ctxmodes.errors import SessionCwdMissingError
    from ctxmodes.tui.app import TerminalSession

_ROWS = [
    PickerItem("continue", "continue", [("", "Continue")]),
    PickerItem("cancel", "cancel", [("", "Cancel")]),
]


def ask_to_continue_here(
    session: TerminalSession,
    missing: SessionCwdMissingError,
    go: Callable[[Path], None],
    cancelled: str,
) -> None:
    """Any thread: ask on the terminal; ``go`` gets the directory to continue in on the UI
    thread, or ``cancelled`` is said."""

    def chosen(item: PickerItem) -> None:
        if item.key == "continue":
            go(Path(missing.fallback_cwd))
        else:
            session.notify(cancelled)

    def ask() -> None:
        session.open_picker(
            Picker(
                f"This session's working directory no longer exists: {missing.session_cwd}\n"
                f"Continue it in {missing.fallback_cwd}?",
                lambda query: _ROWS,
                chosen,
                on_cancel=lambda: session.notify(cancelled),
                hint=selector_hint(session.keymap, "select"),
                filterable=False,
                counted=False,
            )
        )

    session.call_soon(ask)
