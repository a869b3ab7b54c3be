"""The session tree read from the index: roots, children and chains, entries by position.

:func:`~ctxmodes.session.tree.build_tree` makes one node per entry: a million objects for a
million entries. Drawing the tree needs less: the roots, each entry's children in the tree's
order, and where a *chain* ends (each entry of it the only child of the one before), so that
a walk crosses a chain of a thousand entries in one step. Work is appended one entry after
the other, so nearly every entry is the only child of the line before it, and the index knows
the few that are not (:meth:`~ctxmodes.session.store.EntryTable.run_starts`): the shape keeps
only those. Entries are named by their position in the file, as in the index.

Where ids are duplicated, or an entry's id is the empty string, Pi's tree is not the index's
parent links (it has one node per id, attached under the parent of every entry of that id,
and an empty ``parentId`` names the entry whose id is empty); the shape is then read from
:func:`build_tree`'s nodes, each chain one entry long.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any, Final

from ctxmodes.session.store import NO_ENTRY, EntryTable
from ctxmodes.session.tree import SessionTreeNode, build_tree, sibling_order

__all__ = ["TreeShape", "tree_shape"]

JsonObject = dict[str, Any]

_NO_CHILDREN: Final[Sequence[int]] = ()


class TreeShape(ABC):
    """The session tree as entry positions, and the active path through it.

    :attr:`roots` are in file order, :meth:`children` in the tree's order (file order, then
    by timestamp). :attr:`path` is the active path, root first, as runs of positions.
    """

    def __init__(self, table: EntryTable, leaf: int | None) -> None:
        self._table = table
        self.ids = table.ids
        self.types = table.types
        #: The current label of each labelled id, as ``(label, timestamp)``.
        self.labels = table.labels
        #: The leaf's node: the last entry of the leaf's id.
        self.leaf = leaf if leaf is None or not table.duplicated else table.by_id[self.ids[leaf]]
        self.roots: list[int] = []
        self.path: list[Sequence[int]] = []
        #: Entries with more than one child.
        self.forks: set[int] = set()

    @abstractmethod
    def children(self, index: int) -> Sequence[int]:
        """The entry's children, in the tree's order."""

    @abstractmethod
    def chain_end(self, index: int) -> int:
        """The last entry of the chain that starts at ``index``: every entry before it in
        the chain has the next position as its only child."""

    @abstractmethod
    def on_path(self, index: int) -> bool:
        """Whether the entry is on the active path."""

    def is_node(self, index: int) -> bool:
        """Whether the entry is a node of the tree: the last entry of its id."""
        table = self._table
        return not table.duplicated or table.by_id.get(self.ids[index]) == index

    def nodes_of(self, entry_ids: Iterable[Any]) -> dict[str, int]:
        """The node of each of these ids that names one (values that are not strings and
        unknown ids left out), found in one pass over the ids: the store builds no map of
        every id for a few lookups."""
        wanted = {entry_id for entry_id in entry_ids if isinstance(entry_id, str)}
        table = self._table
        if table.duplicated:
            by_id = table.by_id
            return {entry_id: by_id[entry_id] for entry_id in wanted if entry_id in by_id}
        ids = self.ids
        found = compress(range(len(ids)), map(wanted.__contains__, ids)) if wanted else ()
        return {ids[index]: index for index in found}

    def chains(self, top: int) -> Iterator[tuple[int, int]]:
        """The subtree at ``top`` as chains ``(first, last)``, in the order of a depth-first
        walk that takes an entry, then the subtrees of its children from the last child to
        the first."""
        stack = [top]
        while stack:
            first = stack.pop()
            last = self.chain_end(first)
            yield first, last
            stack.extend(self.children(last))

    def entries(self, indexes: Sequence[int]) -> list[JsonObject]:
        """The stored JSON objects of these entries, read in one pass and not kept."""
        return self._table.peek(indexes)

    def message_roles(self, indexes: Sequence[int]) -> list[Any]:
        """The role of each of these ``message`` entries (see ``EntryTable.message_roles``)."""
        return self._table.message_roles(indexes)

    def _sort_by_time(self, siblings: dict[int, list[int]]) -> None:
        """Order each list of siblings as the tree does."""
        key = sibling_order(self._table, [index for group in siblings.values() for index in group])
        for group in siblings.values():
            group.sort(key=key)


class _IndexShape(TreeShape):
    """The shape of a session whose ids are unique: its parent links, from the index."""

    def __init__(self, table: EntryTable, leaf: int | None) -> None:
        super().__init__(table, leaf)
        count = len(table)
        parents = table.parents
        starts = table.run_starts()
        self.roots = [index for index in starts if parents[index] == NO_ENTRY]
        # Children other than the next position, by parent.
        grafted: dict[int, list[int]] = {}
        for index in starts:
            parent = parents[index]
            if parent != NO_ENTRY:
                grafted.setdefault(parent, []).append(index)
        self._crowded: dict[int, list[int]] = {}
        for parent, extra in grafted.items():
            follows = parent + 1 < count and parents[parent + 1] == parent
            if follows or len(extra) > 1:
                self._crowded[parent] = sorted([parent + 1, *extra] if follows else extra)
        self._sort_by_time(self._crowded)
        self._grafted = grafted
        self.forks = set(self._crowded)
        ends = {start - 1 for start in starts if start}
        self._chain_ends = sorted(ends.union(grafted, [count - 1] if count else []))
        self._parents = parents
        self._count = count
        runs = table.path_runs(leaf)
        self.path = list(runs)
        self._path_sorted = sorted(runs, key=attrgetter("start"))
        self._path_starts = [run.start for run in self._path_sorted]

    def children(self, index: int) -> Sequence[int]:
        crowded = self._crowded.get(index)
        if crowded is not None:
            return crowded
        following = index + 1
        if following < self._count and self._parents[following] == index:
            return (following,)
        return self._grafted.get(index, _NO_CHILDREN)

    def chain_end(self, index: int) -> int:
        ends = self._chain_ends
        return ends[bisect_left(ends, index)]

    def on_path(self, index: int) -> bool:
        run = bisect_right(self._path_starts, index) - 1
        return run >= 0 and index in self._path_sorted[run]


class _NodeShape(TreeShape):
    """The shape of :func:`build_tree`'s nodes, for sessions whose ids are not unique or
    where one is empty."""

    def __init__(self, table: EntryTable, leaf: int | None) -> None:
        super().__init__(table, leaf)
        roots = build_tree(table)
        self.roots = [node.index for node in roots]
        self._children: dict[int, list[int]] = {}
        stack = list(roots)
        while stack:
            node = stack.pop()
            if node.children:
                self._children[node.index] = [child.index for child in node.children]
                stack.extend(node.children)
        self.forks = {index for index, children in self._children.items() if len(children) > 1}
        ids = self.ids
        self._on_path = {ids[index] for index in table.path_to(leaf)} if leaf is not None else set()
        self.path = [self._walk_path(roots)]

    def _walk_path(self, roots: list[SessionTreeNode]) -> list[int]:
        """From the root on the active path, down the child on it at every step."""
        path: list[int] = []
        node = next((root for root in roots if root.entry_id in self._on_path), None)
        while node is not None:
            path.append(node.index)
            node = next((child for child in node.children if child.entry_id in self._on_path), None)
        return path

    def children(self, index: int) -> Sequence[int]:
        return self._children.get(index, _NO_CHILDREN)

    def chain_end(self, index: int) -> int:
        return index

    def on_path(self, index: int) -> bool:
        return self.ids[index] in self._on_path


def tree_shape(table: EntryTable, leaf: int | None) -> TreeShape:
    """The shape of ``table``'s tree, with the active path to ``leaf``."""
    unique = not table.duplicated and "" not in table.ids
    return (_IndexShape if unique else _NodeShape)(table, leaf)
