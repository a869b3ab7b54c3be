"""One line for a branch summary: the window it archived, how many entries that branch holds
and the first line of the summary's goal (never Pi's fixed preamble). Shared by the
terminal's replay of the active branch, its ``/tree`` navigator and ``session show``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from ctxmodes.compaction.summary_text import summary_goal
from ctxmodes.windows.marker import MalformedMarkerError, stored_marker_details

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

#: How far into an archived branch its opening window marker is looked for (a rollover's
#: window opens at the branch's first entry; the first window may follow a few entries).
_MARKER_SEARCH: Final = 8


def archived_window_number(
    manager: SessionManager, from_id: str, base_id: str | None
) -> int | None:
    """The number of the window whose marker opens the branch from ``base_id`` (exclusive)
    down to ``from_id``; ``None`` when no window marker opens it."""
    path = manager.get_branch_path(from_id)
    start = 0
    if base_id is not None:
        base = path.position(base_id)
        if base is None:
            return None
        start = base + 1
    for entry_id in path[start : start + _MARKER_SEARCH]:
        stored = manager.get_entry_json(entry_id)
        try:
            details = stored_marker_details(stored) if stored is not None else None
        except MalformedMarkerError:
            return None
        if details is not None:
            return details.window_number if details.kind == "window" else None
    return None


def summarized_branch_size(manager: SessionManager, from_id: str, base_id: str | None) -> int:
    """How many entries the summarized branch holds (below its base, down to ``from_id``)."""
    below = len(manager.get_branch_path(from_id))
    return below - (len(manager.get_branch_path(base_id)) if base_id is not None else 0)


def branch_summary_line(manager: SessionManager, stored: dict[str, Any]) -> str:
    """``window 3 archived · 41 entries · <goal>`` for a stored ``branch_summary`` entry that
    archived a window; ``branch summarized · 41 entries · <goal>`` for any other."""
    from_id = stored.get("fromId")
    base = stored.get("parentId")
    base_id = base if isinstance(base, str) else None
    goal = summary_goal(stored.get("summary"))
    parts: list[str] = []
    if isinstance(from_id, str) and manager.get_entry_json(from_id) is not None:
        number = archived_window_number(manager, from_id, base_id)
        parts.append("branch summarized" if number is None else f"window {number} archived")
        size = summarized_branch_size(manager, from_id, base_id)
        parts.append(f"{size} {'entry' if size == 1 else 'entries'}")
    else:
        parts.append("branch summarized")
    if goal:
        parts.append(goal)
    return " · ".join(parts)
