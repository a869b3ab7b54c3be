"""``ctxmodes session show``: the active path at one indent, side branches collapsed.

A managed session forks at every rollover (Tree keeps each finished window as a side branch
of the session tree), so a drawing that indents at each branch point goes one level deeper
per window, and after a dozen windows ids break into fragments. Instead every entry of the
active path is one line at the same indent, and each side branch that leaves it is one line
under its branch point: the window it holds (window number from its marker), how many
entries it has, and the head of the branch summary made of it. ``--full`` draws the whole
tree (:func:`tree_lines`).

A session can hold a million entries, so the drawing is written line by line as it is made:
the path's entries are read from the file a block at a time (one pass, nothing kept), and
each line is cut to the terminal's width and styled here, at a few string operations a line,
rather than laid out by ``rich`` as a renderable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

from ctxmodes.compaction import BRANCH_SUMMARY_PREAMBLE
from ctxmodes.errors import CtxmodesError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.tree import SessionTreeNode
from ctxmodes.windows.marker import stored_marker_details

__all__ = [
    "active_path_lines",
    "draw_active_path",
    "draw_tree",
    "tree_lines",
    "write_lines",
]

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


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


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
                self._summaries[source] = _summary_head(stored.get("summary"))

    def entry(self, node: SessionTreeNode, stored: dict[str, Any]) -> Line:
        """The line of a path entry; ``stored`` is the entry when its type is one of
        :data:`_DESCRIBED_TYPES` (an empty object otherwise)."""
        line: Line = [(node.entry_id, "bold cyan")]
        entry_type = node.entry_type if isinstance(node.entry_type, str) else "?"
        if entry_type == "message":
            message = stored.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            line.append((f" {role or 'message'}", "green"))
        else:
            line.append((f" {entry_type}", "magenta"))
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
        what = self._window_name(node, stored) or f"side branch from {node.entry_id}"
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


def _summary_head(summary: object) -> str:
    text = str(summary) if isinstance(summary, str) else ""
    text = text.removeprefix(BRANCH_SUMMARY_PREAMBLE)
    return next((_one_line(line) for line in text.splitlines() if line.strip()), "")


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
    that each have one child is drawn as a flat list; at a branch point every child starts
    an indented group holding its own run, so depth grows with branch points, not entries.
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
        drawn.append((node.entry_id, "bold cyan"))
        if node.entry_type == "message":
            message = stored.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            drawn.append((f" {role or 'message'}", "green"))
        else:
            entry_type = node.entry_type if isinstance(node.entry_type, str) else "?"
            drawn.append((f" {entry_type}", "magenta"))
        if node.label is not None:
            drawn.append((f" [{node.label}]", "yellow"))
        if node.entry_id == leaf_id:
            drawn.append(("  ◀ leaf", "bold green"))
        return drawn

    pending: list[tuple[str, SessionTreeNode]] = []
    for prefix, node in _tree_walk(roots):
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


def _run(node: SessionTreeNode) -> list[SessionTreeNode]:
    """``node`` and the entries after it that are each the only child of the one before."""
    run = [node]
    while len(node.children) == 1:
        node = node.children[0]
        run.append(node)
    return run


def _tree_walk(roots: list[SessionTreeNode]) -> Iterator[tuple[str, SessionTreeNode]]:
    """Each node with its guide prefix, in drawing order.

    A container holds either groups (each a branch's first node, its run indented under it)
    or a run (nodes drawn flat, the last one holding the groups of its branches). A single
    root's run hangs from the title directly. The walk keeps a stack, not recursion: a
    session may branch thousands of times.
    """
    # (nodes, whether they are a run, next position, prefix of their children's guides)
    top = (roots, False) if len(roots) > 1 else (_run(roots[0]) if roots else [], True)
    stack: list[tuple[list[SessionTreeNode], bool, int, str]] = [(*top, 0, "")]
    while stack:
        nodes, is_run, position, prefix = stack.pop()
        if position == len(nodes):
            continue
        stack.append((nodes, is_run, position + 1, prefix))
        node = nodes[position]
        last = position == len(nodes) - 1
        yield prefix + ("└── " if last else "├── "), node
        below = prefix + ("    " if last else "│   ")
        if is_run:
            if last and node.children:
                stack.append((node.children, False, 0, below))
            continue
        run = _run(node)
        if len(run) > 1:
            stack.append((run[1:], True, 0, below))
        elif node.children:
            stack.append((node.children, False, 0, below))


def draw_tree(manager: SessionManager, console: Console) -> None:
    """Write :func:`tree_lines` to ``console``'s file (see :func:`write_lines`)."""
    write_lines(tree_lines(manager), console)


def draw_active_path(manager: SessionManager, console: Console) -> None:
    """Write :func:`active_path_lines` to ``console``'s file (see :func:`write_lines`)."""
    write_lines(active_path_lines(manager), console)


class _Styles:
    """The escape codes ``console`` wraps text of each style in, worked out once per style."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._codes: dict[str, tuple[str, str]] = {}

    def wrap(self, text: str, style: str) -> str:
        codes = self._codes.get(style)
        if codes is None:
            with self._console.capture() as captured:
                self._console.print(Text("\0", style=style), end="")
            before, _, after = captured.get().partition("\0")
            codes = self._codes[style] = (before, after)
        return codes[0] + text + codes[1]


def write_lines(lines: Iterable[Line], console: Console) -> None:
    """Write each line to the console's file, never wrapping: a line wider than the console
    is cut to one cell less and ends in an ellipsis, as ``rich`` draws a ``Text`` with
    ``overflow="ellipsis"``. Styles become escape codes only where the console uses colour."""
    out = console.file
    width = console.width
    styles = _Styles(console) if console.color_system is not None else None
    for line in lines:
        if sum(cell_len(text) for text, _ in line) > width:
            line = _cut(line, width - 1)
        text = "".join(
            styles.wrap(piece, style) if styles is not None and style else piece
            for piece, style in line
        )
        out.write(text + "\n")
    out.flush()


def _cut(line: Line, room: int) -> Line:
    """The first ``room`` cells of ``line`` and an ellipsis."""
    kept: Line = []
    for text, style in line:
        cells = cell_len(text)
        if cells >= room:
            kept.append((set_cell_size(text, max(room, 0)) + "…", style))
            return kept
        kept.append((text, style))
        room -= cells
    return kept
