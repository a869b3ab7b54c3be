"""The drawing of ``ctxmodes session show`` as it was made from one node per entry.

:mod:`ctxmodes.cli.session_drawing` draws from the index instead (no node per entry, message
roles read without decoding entries); for any session it must make exactly the lines this
one makes, which walks :meth:`SessionManager.get_tree`'s nodes and decodes every entry it
describes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from ctxmodes.compaction import summary_goal
from ctxmodes.errors import CtxmodesError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.tree import SessionTreeNode
from ctxmodes.windows.marker import stored_marker_details

__all__ = ["active_path_lines", "tree_lines"]

#: One styled piece of a line: its text and a ``rich`` style ("" for none).
Segment = tuple[str, str]
Line = list[Segment]

# Path entries read from the file at a time: bounded memory, few reads.
_READ_BLOCK: Final = 512
# The entry types whose line shows something read from the entry itself.
_DESCRIBED_TYPES: Final = frozenset({"message", "custom", "custom_message"})


def _subtree(node: SessionTreeNode) -> list[SessionTreeNode]:
    found: list[SessionTreeNode] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(current.children)
    return found


def _kind(node: SessionTreeNode, stored: dict[str, Any]) -> Segment:
    """A message's role (from ``stored``, the entry), or the entry's type."""
    if node.entry_type == "message":
        message = stored.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        return f" {role or 'message'}", "green"
    return f" {node.entry_type if isinstance(node.entry_type, str) else '?'}", "magenta"


class _Describer:
    """The words for one entry, and for one collapsed side branch."""

    def __init__(self, manager: SessionManager, roots: list[SessionTreeNode]) -> None:
        self._manager = manager
        #: Branch summaries by the id of the entry they summarize up to (``fromId``).
        self._summaries: dict[str, str] = {}
        summaries = [
            node.entry_id
            for root in roots
            for node in _subtree(root)
            if node.entry_type == "branch_summary"
        ]
        for stored in manager.read_entries_json(summaries):
            source = (stored or {}).get("fromId")
            if isinstance(source, str) and stored is not None:
                self._summaries[source] = summary_goal(stored.get("summary"))

    def entry(self, node: SessionTreeNode, stored: dict[str, Any]) -> Line:
        """The line of a path entry; ``stored`` is the entry when its type is one of
        :data:`_DESCRIBED_TYPES` (an empty object otherwise)."""
        line: Line = [(node.entry_id, "bold cyan"), _kind(node, stored)]
        if node.entry_type != "message":
            custom_type = stored.get("customType")
            if isinstance(custom_type, str):
                line.append((f" {custom_type}", "magenta"))
            window = self._window_name(node, stored)
            if window is not None:
                line.append((f" ({window})", "bold"))
        if node.label is not None:
            line.append((f" [{node.label}]", "yellow"))
        return line

    def side_branch(self, node: SessionTreeNode) -> Line:
        members = _subtree(node)
        stored = self._manager.get_entry_json(node.entry_id) or {}
        window = self._window_name(node, stored)
        # Worded as the terminal's replay and the /tree navigator word an archived window.
        what = f"{window} archived" if window else f"side branch from {node.entry_id}"
        line: Line = [("  ⎇ ", "dim"), (what, "bold")]
        line.append((f" · {len(members)} {'entry' if len(members) == 1 else 'entries'}", ""))
        summary = next(
            (self._summaries[m.entry_id] for m in members if m.entry_id in self._summaries), None
        )
        if summary:
            line.append((f" · {summary}", "italic"))
        return line

    @staticmethod
    def _window_name(node: SessionTreeNode, stored: dict[str, Any]) -> str | None:
        if node.entry_type != "custom_message":
            return None
        try:
            details = stored_marker_details(stored)
        except CtxmodesError:  # a damaged marker is drawn as any other entry
            return None
        return None if details is None else f"window {details.window_number}"


def active_path_lines(manager: SessionManager) -> Iterator[Line]:
    """The session as its active path, one entry per line, with every side branch collapsed
    into one line (window number, entry count, summary head), made as they are read."""
    roots = manager.get_tree()
    describe = _Describer(manager, roots)
    on_path = set(manager.get_branch_ids())
    leaf_id = manager.get_leaf_id()
    title = manager.get_session_name() or manager.session_id
    yield [(f"session {title}", "bold")]

    def collapsed(nodes: Iterable[SessionTreeNode]) -> Iterator[Line]:
        return (describe.side_branch(n) for n in nodes if n.entry_id not in on_path)

    path_root = next((root for root in roots if root.entry_id in on_path), None)
    yield from collapsed(root for root in roots if root is not path_root)
    path: list[SessionTreeNode] = []
    node = path_root
    while node is not None:
        path.append(node)
        node = next((child for child in node.children if child.entry_id in on_path), None)
    for start in range(0, len(path), _READ_BLOCK):
        block = path[start : start + _READ_BLOCK]
        wanted = [node.entry_id for node in block if node.entry_type in _DESCRIBED_TYPES]
        stored = dict(zip(wanted, manager.read_entries_json(wanted), strict=True))
        for node in block:
            line = [("● ", "bold green"), *describe.entry(node, stored.get(node.entry_id) or {})]
            if node.entry_id == leaf_id:
                line.append(("  ◀ leaf", "bold green"))
            yield line
            yield from collapsed(node.children)
    if leaf_id is None:
        yield [("(no leaf: the next entry starts a new root)", "dim")]


def tree_lines(manager: SessionManager) -> Iterator[Line]:
    """The whole session tree, one line per entry (id, type or message role, label), drawn
    with the guides of ``rich``'s ``Tree`` and made as they are read.

    Entries on the active path are marked ``●`` and the leaf ``◀ leaf``. A run of entries
    that each have one child is drawn as a flat list. At a branch point the active path goes
    on at the same indent and every other child starts an indented group under the branch
    point, holding its own run: the active path never moves right, however many windows a
    managed session archived, and depth grows only with branch points off it.
    """
    roots = manager.get_tree()
    on_path = set(manager.get_branch_ids())
    leaf_id = manager.get_leaf_id()
    title = manager.get_session_name() or manager.session_id
    yield [(f"session {title}", "bold")]

    def line(prefix: str, node: SessionTreeNode, stored: dict[str, Any]) -> Line:
        drawn: Line = [(prefix, "")]
        if node.entry_id in on_path:
            drawn.append(("● ", "bold green"))
        drawn += [(node.entry_id, "bold cyan"), _kind(node, stored)]
        if node.label is not None:
            drawn.append((f" [{node.label}]", "yellow"))
        if node.entry_id == leaf_id:
            drawn.append(("  ◀ leaf", "bold green"))
        return drawn

    pending: list[tuple[str, SessionTreeNode]] = []
    for prefix, node in _tree_walk(roots, on_path):
        pending.append((prefix, node))
        if len(pending) == _READ_BLOCK:
            yield from _with_roles(manager, pending, line)
            pending = []
    yield from _with_roles(manager, pending, line)


def _with_roles(
    manager: SessionManager,
    drawn: list[tuple[str, SessionTreeNode]],
    line: Callable[[str, SessionTreeNode, dict[str, Any]], Line],
) -> Iterator[Line]:
    """The lines of a block of nodes, their message entries read in one pass."""
    wanted = [node.entry_id for _, node in drawn if node.entry_type == "message"]
    stored = dict(zip(wanted, manager.read_entries_json(wanted), strict=True))
    return (line(prefix, node, stored.get(node.entry_id) or {}) for prefix, node in drawn)


def _run(
    first: SessionTreeNode, on_path: set[str]
) -> tuple[list[SessionTreeNode], dict[int, list[SessionTreeNode]]]:
    """The run that starts at ``first``: each next entry is the only child of the one before
    or, at a branch point, the child on the active path; and the side branches (every other
    child; all children where the run ends) hanging from each entry, by its index."""
    run = [first]
    sides: dict[int, list[SessionTreeNode]] = {}
    node = first
    while True:
        children = node.children
        follow = children[0] if len(children) == 1 else None
        if follow is None:
            follow = next((child for child in children if child.entry_id in on_path), None)
            side = [child for child in children if child is not follow]
            if side:
                sides[node.index] = side
            if follow is None:
                return run, sides
        run.append(follow)
        node = follow


class _Items:
    """What one container of the drawing holds: entries of a run (each with its side
    branches under it), then side branches (each a group: its first entry, its run
    indented under it). A lazy view, so a run of a million entries costs one list."""

    __slots__ = ("groups", "run", "sides")

    def __init__(
        self,
        run: list[SessionTreeNode],
        sides: dict[int, list[SessionTreeNode]],
        groups: list[SessionTreeNode],
    ) -> None:
        self.run, self.sides, self.groups = run, sides, groups

    def __len__(self) -> int:
        return len(self.run) + len(self.groups)

    def child_items(self, position: int, on_path: set[str]) -> tuple[SessionTreeNode, _Items]:
        """The node at ``position`` and what is drawn under it."""
        if position < len(self.run):
            node = self.run[position]
            return node, _Items([], {}, self.sides.get(node.index, []))
        first = self.groups[position - len(self.run)]
        run, sides = _run(first, on_path)
        # A group's first entry holds its run, then its own side branches.
        return first, _Items(run[1:], sides, sides.pop(first.index, []))


def _tree_walk(
    roots: list[SessionTreeNode], on_path: set[str]
) -> Iterator[tuple[str, SessionTreeNode]]:
    """Each node with its guide prefix, in drawing order.

    A single root's run hangs from the title; several roots are groups. The active path
    goes on at one indent through every branch point, its side branches indented under the
    branch point. The walk keeps a stack, not recursion: a session may branch thousands of
    times.
    """
    if len(roots) == 1:
        run, sides = _run(roots[0], on_path)
        top = _Items(run, sides, [])
    else:
        top = _Items([], {}, roots)
    stack: list[tuple[_Items, int, str]] = [(top, 0, "")]
    while stack:
        items, position, prefix = stack.pop()
        if position == len(items):
            continue
        stack.append((items, position + 1, prefix))
        node, below = items.child_items(position, on_path)
        last = position == len(items) - 1
        yield prefix + ("└── " if last else "├── "), node
        if len(below):
            stack.append((below, 0, prefix + ("    " if last else "│   ")))
