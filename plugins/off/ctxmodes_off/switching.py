"""What switching an Off session to a managed mode changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.windows import count_branch_windows

if TYPE_CHECKING:
    from ctxmodes import SessionView

#: The built-in modes that send the model only the latest window: a session that has no
#: window marker yet opens window 0 at its next input.
WINDOWED = frozenset({"local", "tree", "remote"})


def describe_switch(manager: SessionView, target: str) -> str | None:
    """Off sends the whole branch; a windowed mode sends only the latest window, so what
    came before it is no longer sent (it stays in the file)."""
    if target not in WINDOWED or "message" not in manager.get_branch_types():
        return None
    if count_branch_windows(manager):
        return "messages before the latest window marker are no longer sent to the model"
    return "the conversation so far is no longer sent to the model"
