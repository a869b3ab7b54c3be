"""The session as a tree of entries (Pi's ``getTree``).

Roots are the entries whose ``parentId`` is ``null``, missing, their own id, or unknown.
Children keep file order, then are sorted by entry timestamp (oldest first; ties keep file
order). Each node carries the current label of its entry. Label entries are nodes too.

Where parent links form a cycle, the entry where the store cut the cycle is a root (Pi leaves
the whole cycle out of its tree). Duplicated ids can tie nodes into cycles of their own (see
:func:`_make_forest`): the tree is always a forest, each node in it once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxmodes.session.ids import timestamp_ms
from ctxmodes.session.store import EntryTable

if TYPE_CHECKING:
    from ctxmodes.session.models import SessionEntry

__all__ = ["SessionTreeNode", "build_tree", "flat_tree", "sibling_order"]


@dataclass(eq=False, slots=True)
class SessionTreeNode:
    """One entry in the session tree."""

    entry_id: str
    entry_type: Any
    index: int
    children: list[SessionTreeNode] = field(default_factory=list)
    label: Any = None
    label_timestamp: Any = None
    _resolve: Callable[[int], SessionEntry] | None = field(default=None, repr=False)

    @property
    def entry(self) -> SessionEntry:
        """The entry itself (decoded on access)."""
        if self._resolve is None:
            raise LookupError("this tree node was built without access to its entries")
        return self._resolve(self.index)


def _compare(left: int | None, right: int | None) -> int:
    # Pi's comparator returns NaN for unparsable timestamps, which sorting treats as "equal".
    if left is None or right is None:
        return 0
    return (left > right) - (left < right)


def build_tree(
    table: EntryTable, resolve: Callable[[int], SessionEntry] | None = None
) -> list[SessionTreeNode]:
    """The tree of every entry of ``table``; ``resolve`` backs :attr:`SessionTreeNode.entry`."""
    nodes: dict[str, SessionTreeNode] = {}
    labels = table.labels
    for index, entry_id in enumerate(table.ids):
        label = labels.get(entry_id)
        nodes[entry_id] = SessionTreeNode(
            entry_id,
            table.types[index],
            index,
            label=label[0] if label else None,
            label_timestamp=label[1] if label else None,
            _resolve=resolve,
        )
    roots: list[SessionTreeNode] = []
    for index, (entry_id, parent_id) in enumerate(zip(table.ids, table.parent_ids, strict=True)):
        node = nodes[entry_id]
        if parent_id is None or parent_id == entry_id or index in table.cut_roots:
            roots.append(node)
            continue
        parent = nodes.get(parent_id)
        (parent.children if parent is not None else roots).append(node)
    _make_forest(table, nodes, roots)
    _sort_children(table, roots)
    return roots


def _make_forest(
    table: EntryTable, nodes: dict[str, SessionTreeNode], roots: list[SessionTreeNode]
) -> None:
    """Turn what was attached into a forest that every walk finishes.

    With duplicated ids, the node of an id (its last entry, as in Pi) is attached once for
    every entry of that id, under each entry's parent, so it can sit under two parents or
    inside a cycle of nodes that the store's cut of entry links does not see (Pi's
    ``getTree`` then loops forever). A node keeps its first place in a walk from the roots;
    of the nodes no root reaches, the first in file order becomes a root, until every node
    is reached.
    """
    seen: set[int] = set()

    def reach(start: SessionTreeNode) -> None:
        seen.add(start.index)
        stack = [start]
        while stack:
            node = stack.pop()
            kept = []
            for child in node.children:
                if child.index not in seen:
                    seen.add(child.index)
                    kept.append(child)
            if len(kept) != len(node.children):
                node.children = kept
            stack.extend(kept)

    unique_roots = []
    for root in roots:
        if root.index not in seen:
            reach(root)
            unique_roots.append(root)
    if len(seen) < len(nodes):
        for node in sorted(nodes.values(), key=lambda n: n.index):
            if node.index not in seen:
                reach(node)
                unique_roots.append(node)
    roots[:] = unique_roots


def _sort_children(table: EntryTable, roots: list[SessionTreeNode]) -> None:
    crowded: list[SessionTreeNode] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        if len(node.children) > 1:
            crowded.append(node)
        stack.extend(node.children)
    if not crowded:
        return
    key = sibling_order(table, [child.index for node in crowded for child in node.children])
    for node in crowded:
        node.children.sort(key=lambda child: key(child.index))


def sibling_order(table: EntryTable, indexes: Sequence[int]) -> Callable[[int], Any]:
    """A sort key that orders siblings among ``indexes`` as the tree does: by timestamp,
    oldest first (sorting keeps file order where it cannot tell)."""
    times = {
        index: timestamp_ms(entry.get("timestamp"))
        for index, entry in zip(indexes, table.entries(indexes), strict=True)
    }
    return functools.cmp_to_key(lambda a, b: _compare(times[a], times[b]))


def flat_tree(roots: list[SessionTreeNode]) -> dict[str, Any]:
    """``{roots, children, labels}``: the tree as ids, in the shape Pi's oracle reports it."""
    out: dict[str, Any] = {"roots": [node.entry_id for node in roots], "children": {}, "labels": {}}
    stack = list(roots)
    while stack:
        node = stack.pop()
        out["children"][node.entry_id] = [child.entry_id for child in node.children]
        if node.label is not None or node.label_timestamp is not None:
            label: dict[str, Any] = {}
            if node.label is not None:
                label["label"] = node.label
            if node.label_timestamp is not None:
                label["labelTimestamp"] = node.label_timestamp
            out["labels"][node.entry_id] = label
        stack.extend(node.children)
    return out
