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


def describe_leaving(manager: SessionView) -> str | None:
    count = _archive_count(manager)
    if not count:
        return "no window is archived yet; window markers stop being managed"
    summaries = "1 archived summary becomes an ordinary Pi summary and re-enters"
    if count > 1:
        summaries = f"{count} archived summaries become ordinary Pi summaries and re-enter"
    return f"{summaries} the context; run /compact first to leave cleanly"
