"""How Tree recognizes a session file it managed, and what leaving it changes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes_tree.archive_index import TreeArchiveIndex

if TYPE_CHECKING:
    from ctxmodes import Evidence, SessionView


def _archive_count(manager: SessionView) -> int:
    index = TreeArchiveIndex(manager)
    index.follow_leaf(manager.get_leaf_id())
    return len(index.archives)


def recognize(manager: SessionView) -> Evidence | None:
    """Valid archive manifests on the active branch: only Tree writes them."""
    return "exclusive" if _archive_count(manager) else None


def describe_switch(manager: SessionView, target: str) -> str | None:
    """Off sends every summary on the path, so the archived ones re-enter; Local and Remote
    keep the markers and send only the latest window, so they stay out, and only Tree's
    history reads the archived side branches."""
    count = _archive_count(manager)
    if target == "off":
        if not count:
            return "no window is archived yet; window markers stop being managed"
        summaries = _counted(
            count,
            "1 archived summary becomes an ordinary Pi summary and re-enters",
            "archived summaries become ordinary Pi summaries and re-enter",
        )
        return f"{summaries} the context; run /compact first to leave cleanly"
    if target == "local":
        if not count:
            return "window markers, history and notes carry over"
        leave = _counted(
            count,
            "1 archived window leaves history and its summary stays",
            "archived windows leave history and their summaries stay",
        )
        return f"{leave} out of the context; window markers and notes carry over"
    if target == "remote":
        stay = "" if not count else " and the archived summary stays out of the context"
        if count > 1:
            stay = f" and the {count} archived summaries stay out of the context"
        return (
            f"window markers carry over{stay}; history and notes come from the Remote "
            "service, not this file"
        )
    return None


def _counted(count: int, one: str, many: str) -> str:
    """``one`` for a single archived window, else ``many`` after the count."""
    return one if count == 1 else f"{count} {many}"
