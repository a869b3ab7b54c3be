"""How Local recognizes a session file it managed, and what leaving it changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.windows import count_branch_windows

if TYPE_CHECKING:
    from ctxmodes import Evidence, SessionView


def recognize(manager: SessionView) -> Evidence | None:
    """Window markers on the active branch; Tree and Remote write them too."""
    return "shared" if count_branch_windows(manager) else None


def describe_switch(manager: SessionView, target: str) -> str | None:
    """Off sends the whole branch again; Tree and Remote keep Local's markers and send only
    the latest window, as Local does. Tree reads history and notes from this file, as Local
    does; Remote reads them from its service."""
    earlier = count_branch_windows(manager) - 1
    if target == "off":
        if earlier <= 0:
            return "window markers stop being managed"
        windows = "1 earlier window is" if earlier == 1 else f"{earlier} earlier windows are"
        return f"{windows} sent to the model again; run /compact first to leave cleanly"
    kept = " and earlier windows stay out of the context" if earlier > 0 else ""
    if target == "tree":
        return f"window markers, history and notes carry over{kept}"
    if target == "remote":
        return (
            f"window markers carry over{kept}; history and notes come from the Remote service, "
            "not this file"
        )
    return None
