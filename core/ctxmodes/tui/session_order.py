"""The orders of the resume picker, as Pi's session selector's ``app.session.toggleSort``
cycles them: threaded (each fork under the session it came from, the most recent activity
first), recent (most recently active first) and fuzzy (the best match of what is typed first,
see :mod:`ctxmodes.tui.session_search`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from ctxmodes.fuzzy_filter import fuzzy_match
from ctxmodes.tui.heads import SessionHead

SortMode = Literal["threaded", "recent", "relevance"]
#: Pi's order of the modes, and the word its header shows for each.
SORT_MODES: Final[tuple[SortMode, ...]] = ("threaded", "recent", "relevance")
SORT_LABELS: Final[dict[SortMode, str]] = {
    "threaded": "Threaded",
    "recent": "Recent",
    "relevance": "Fuzzy",
}


def fuzzy_score(query: str, text: str) -> float | None:
    """Pi's ``fuzzyMatch`` score of ``query`` in ``text`` (lower is better), ``None`` when
    they do not match; see :mod:`ctxmodes.fuzzy_filter`."""
    found = fuzzy_match(query, text)
    return found.score if found.matches else None


@dataclass
class _Node:
    head: SessionHead
    children: list[_Node] = field(default_factory=list)
    latest: float = 0.0


def threaded(heads: Sequence[SessionHead]) -> list[tuple[SessionHead, str]]:
    """Pi's threaded list: each session under the one it was forked from (when that is
    listed), siblings and roots by the latest activity of their whole thread, each with the
    tree drawn before it (``├─ ``, ``└─ ``, ``│  ``)."""
    nodes = {os.path.realpath(head.path): _Node(head) for head in heads}
    roots: list[_Node] = []
    for node in nodes.values():
        parent = node.head.parent_session
        owner = nodes.get(os.path.realpath(parent)) if parent else None
        if owner is not None and owner is not node:
            owner.children.append(node)
        else:
            roots.append(node)

    # Files naming each other as parents form a ring no root reaches (Pi leaves them out):
    # each of them, and what hangs off them, is listed on its own.
    reached: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        reached.add(id(node))
        stack.extend(node.children)
    for node in nodes.values():
        if id(node) not in reached:
            roots.append(node)
            node.children = []

    def latest(node: _Node) -> float:
        node.latest = max([node.head.modified, *(latest(child) for child in node.children)])
        return node.latest

    for root in roots:
        latest(root)
    shown: list[tuple[SessionHead, str]] = []

    def walk(node: _Node, depth: int, continues: list[bool], last: bool) -> None:
        prefix = ""
        if depth:
            prefix = "".join("│  " if more else "   " for more in continues)
            prefix += "└─ " if last else "├─ "
        shown.append((node.head, prefix))
        children = sorted(node.children, key=lambda child: -child.latest)
        for index, child in enumerate(children):
            walk(child, depth + 1, [*continues, depth > 0 and not last], index == len(children) - 1)

    for index, root in enumerate(sorted(roots, key=lambda root: -root.latest)):
        walk(root, 0, [], index == len(roots) - 1)
    return shown
