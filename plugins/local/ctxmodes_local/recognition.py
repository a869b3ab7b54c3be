"""How Local recognizes a session file it managed, and what leaving it changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.windows import count_branch_windows

if TYPE_CHECKING:
    from ctxmodes import Evidence, SessionView


def recognize(manager: SessionView) -> Evidence | None:
    """Window markers on the active branch; Tree and Remote write them too."""
    return "shared" if count_branch_windows(manager) else None


def describe_leaving(manager: SessionView) -> str | None:
    earlier = count_branch_windows(manager) - 1
    if earlier <= 0:
        return "window markers stop being managed"
    windows = "1 earlier window is" if earlier == 1 else f"{earlier} earlier windows are"
    return f"{windows} sent to the model again; run /compact first to leave cleanly"
