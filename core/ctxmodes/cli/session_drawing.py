"""``ctxmodes session show``: the active path at one indent, side branches collapsed.

A managed session forks at every rollover (Tree keeps each finished window as a side branch
of the session tree), so a drawing that indents at each branch point goes one level deeper
per window, and after a dozen windows ids break into fragments. Instead every entry of the
active path is one line at the same indent, and each side branch that leaves it is one line
under its branch point: the window it holds (window number from its marker), how many
entries it has, and the first line of the goal of the branch summary made of it. ``--full``
draws the whole tree (:func:`tree_lines`).

A session can hold a million entries, so nothing is built per entry before the first line
is written: the tree comes from the index (:mod:`ctxmodes.session.tree_shape`: roots,
children and chains of positions, no node per entry), a message's line needs only its role,
which the store reads for a block of consecutive lines in one decoder pass without building
the messages, and each line is cut to the terminal's width, styled and written here, a block
of lines at a time, rather than laid out by ``rich`` as a renderable. What a session holds
is shown and never obeyed: characters that would steer the terminal are written as escapes
(:func:`~ctxmodes.terminal_text.visible`).
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, compress, islice, repeat
from operator import eq, itemgetter
from typing import Any, Final, TypeVar

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

from ctxmodes.compaction.summary_text import summary_goal
from ctxmodes.errors import CtxmodesError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.tree_shape import TreeShape
from ctxmodes.terminal_text import steers_a_terminal, visible

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
_Each = TypeVar("_Each")

# Entries read from the file at a time: bounded memory, few reads.
_READ_BLOCK: Final = 4096
# The entry types whose line shows something read from the entry besides a message's role.
_CUSTOM_TYPES: Final = frozenset({"custom", "custom_message"})


class _Entries:
    """What the lines of a block of entries show from the entries themselves: the kind of
    each entry (a message's role, or the entry's type) and, with ``custom``, the stored JSON
    of each custom entry; read in one pass, not kept."""

    def __init__(self, shape: TreeShape, block: Sequence[int], *, custom: bool) -> None:
        types = shape.types
        self.kinds = list(map(_kind, map(types.__getitem__, block), shape.message_roles(block)))
        self.stored: dict[int, dict[str, Any]] = {}
        if custom:
            wanted = [index for index in block if types[index] in _CUSTOM_TYPES]
            self.stored = dict(zip(wanted, shape.entries(wanted), strict=True))


@functools.lru_cache(maxsize=256)
def _common_kind(entry_type: str | None, role: str | None) -> Segment:
    if entry_type == "message":
        return f" {role or 'message'}", "green"
    return f" {entry_type if isinstance(entry_type, str) else '?'}", "magenta"


def _kind(entry_type: str | None, role: Any) -> Segment:
    """A message's role, or the entry's type."""
    if role is None or type(role) is str:
        return _common_kind(entry_type, role)
    return f" {role or 'message'}", "green"  # a role of another JSON type, as Python shows it


def _blocks(items: Iterable[_Each]) -> Iterator[Sequence[_Each]]:
    """``items`` a block at a time (slices of a ``range``: ranges)."""
    if isinstance(items, Sequence):
        for start in range(0, len(items), _READ_BLOCK):
            yield items[start : start + _READ_BLOCK]
        return
    iterator = iter(items)
    while block := list(islice(iterator, _READ_BLOCK)):
        yield block


def _window_name(entry_type: Any, stored: dict[str, Any]) -> str | None:
    if entry_type != "custom_message":
        return None
    # Markers are read by the window kit's models (pydantic), which a session without
    # custom messages never needs: imported when the first one is drawn.
    from ctxmodes.windows.marker import stored_marker_details

    try:
        details = stored_marker_details(stored)
    except CtxmodesError:  # a damaged marker is drawn as any other entry
        return None
    return None if details is None else f"window {details.window_number}"


class _Describer:
    """The words for one entry, and for one collapsed side branch."""

    def __init__(self, shape: TreeShape) -> None:
        self._shape = shape
        #: The goal of the branch summary made of each entry, by the summarized entry.
        self._summaries = _summaries_by_source(shape)
        self._sources = sorted(self._summaries)

    def details(self, index: int, read: _Entries) -> Line:
        """What the line of a path entry that is not a message shows after its type."""
        stored = read.stored.get(index, {})
        line: Line = []
        custom_type = stored.get("customType")
        if isinstance(custom_type, str):
            line.append((f" {custom_type}", "magenta"))
        window = _window_name(self._shape.types[index], stored)
        if window is not None:
            line.append((f" ({window})", "bold"))
        return line

    def side_branch(self, top: int) -> Line:
        shape = self._shape
        entry_type = shape.types[top]
        stored = shape.entries([top])[0] if entry_type == "custom_message" else {}
        window = _window_name(entry_type, stored)
        # Worded as the terminal's replay and the /tree navigator word an archived window.
        what = f"{window} archived" if window else f"side branch from {shape.ids[top]}"
        line: Line = [("  ⎇ ", "dim"), (what, "bold")]
        count = 0
        summary: str | None = None
        sources = self._sources
        for first, last in shape.chains(top):
            count += last - first + 1
            if summary is None:
                found = bisect_left(sources, first)
                if found < len(sources) and sources[found] <= last:
                    summary = self._summaries[sources[found]]
        line.append((f" · {count} {'entry' if count == 1 else 'entries'}", ""))
        if summary:
            line.append((f" · {summary}", "italic"))
        return line


def _summaries_by_source(shape: TreeShape) -> dict[int, str]:
    """The goal of each branch summary of the tree, by the entry it summarizes up to (its
    ``fromId``). Where several summarize the same entry, the one a walk of the tree from
    its roots reaches last is taken."""
    types = shape.types
    made: list[tuple[int, int]] = []  # (summary, source)
    found = [
        index
        for index in compress(range(len(types)), map(eq, types, repeat("branch_summary")))
        if shape.is_node(index)
    ]
    stored = shape.entries(found)
    nodes = shape.nodes_of(entry.get("fromId") for entry in stored)
    goals: dict[int, str] = {}
    for index, entry in zip(found, stored, strict=True):
        source = entry.get("fromId")
        if isinstance(source, str) and source in nodes:
            made.append((index, nodes[source]))
            goals[index] = summary_goal(entry.get("summary"))
    if len({source for _, source in made}) < len(made):
        order = _walk_order(shape, sorted(goals))
        made.sort(key=lambda pair: order[pair[0]])
    return {source: goals[index] for index, source in made}


def _walk_order(shape: TreeShape, wanted: list[int]) -> dict[int, int]:
    """Where each of ``wanted`` (sorted) comes in a walk of the whole tree from its roots."""
    order: dict[int, int] = {}
    for root in shape.roots:
        for first, last in shape.chains(root):
            position = bisect_left(wanted, first)
            while position < len(wanted) and wanted[position] <= last:
                order[wanted[position]] = len(order)
                position += 1
    return order


def active_path_lines(manager: SessionManager) -> Iterator[Line]:
    """The session as its active path, one entry per line, with every side branch collapsed
    into one line (window number, entry count, summary head), made as they are read."""
    shape = manager.get_tree_shape()
    describe = _Describer(shape)
    leaf = shape.leaf
    title = manager.get_session_name() or manager.session_id
    yield [(f"session {title}", "bold")]

    def collapsed(tops: Iterable[int]) -> Iterator[Line]:
        return (describe.side_branch(top) for top in tops if not shape.on_path(top))

    yield from collapsed(shape.roots)
    # Side branches leave the path where it forks, and below its last entry.
    leaves_path = set(shape.forks)
    leaves_path.update(run[-1] for run in shape.path[-1:] if run)
    ids, types, labels = shape.ids, shape.types, shape.labels
    for block in chain.from_iterable(map(_blocks, shape.path)):
        read = _Entries(shape, block, custom=True)
        for index, kind in zip(block, read.kinds, strict=True):
            entry_id = ids[index]
            line = [("● ", "bold green"), (entry_id, "bold cyan"), kind]
            if types[index] != "message":
                line += describe.details(index, read)
            line += _marks(labels.get(entry_id), index == leaf)
            yield line
            if index in leaves_path:
                yield from collapsed(shape.children(index))
    if leaf is None:
        yield [("(no leaf: the next entry starts a new root)", "dim")]


def _marks(label: tuple[Any, Any] | None, is_leaf: bool) -> Line:
    """What ends an entry's line: its label (``(label, timestamp)``) and the leaf marker."""
    marks: Line = [] if label is None else [(f" [{label[0]}]", "yellow")]
    if is_leaf:
        marks.append(("  ◀ leaf", "bold green"))
    return marks


def tree_lines(manager: SessionManager) -> Iterator[Line]:
    """The whole session tree, one line per entry (id, type or message role, label), drawn
    with the guides of ``rich``'s ``Tree`` and made as they are read.

    Entries on the active path are marked ``●`` and the leaf ``◀ leaf``. A run of entries
    that each have one child is drawn as a flat list. At a branch point the active path goes
    on at the same indent and every other child starts an indented group under the branch
    point, holding its own run: the active path never moves right, however many windows a
    managed session archived, and depth grows only with branch points off it.
    """
    shape = manager.get_tree_shape()
    leaf = shape.leaf
    title = manager.get_session_name() or manager.session_id
    yield [(f"session {title}", "bold")]

    ids, labels = shape.ids, shape.labels
    for block in _blocks(_tree_walk(shape)):
        read = _Entries(shape, [index for _, index in block], custom=False)
        for (prefix, index), kind in zip(block, read.kinds, strict=True):
            entry_id = ids[index]
            line: Line = [(prefix, "")]
            if shape.on_path(index):
                line.append(("● ", "bold green"))
            line += [(entry_id, "bold cyan"), kind, *_marks(labels.get(entry_id), index == leaf)]
            yield line


class _Run:
    """The entries of a run (each the only child of the one before, or at a branch point
    the child on the active path) as chains of positions, and the side branches hanging
    from its entries (every other child; all children where the run ends)."""

    __slots__ = ("chains", "length", "sides")

    def __init__(self, shape: TreeShape, first: int) -> None:
        self.chains: list[range] = []
        #: Side branches by the entry they hang from: always the last of a chain.
        self.sides: dict[int, Sequence[int]] = {}
        node = first
        while True:
            last = shape.chain_end(node)
            self.chains.append(range(node, last + 1))
            children = shape.children(last)
            follow = children[0] if len(children) == 1 else None
            if follow is None:
                follow = next((child for child in children if shape.on_path(child)), None)
                side = [child for child in children if child != follow]
                if side:
                    self.sides[last] = side
                if follow is None:
                    break
            node = follow
        self.length = sum(map(len, self.chains))


#: What is drawn under an entry: the entries of a run from a position on (each with its
#: side branches under it), then side branches (each a group: its first entry, its run
#: indented under it).
_Container = tuple[_Run | None, int, Sequence[int]]
#: One item of a container: whether it is the container's last, the entry, and what is
#: drawn under it (``None``: nothing).
_Item = tuple[bool, int, _Container | None]


def _items(shape: TreeShape, container: _Container) -> Iterator[_Item]:
    run, skip, groups = container
    total = len(groups) + (run.length - skip if run is not None else 0)
    position = 0
    if run is not None:
        sides = run.sides
        for chain_of_run in run.chains:
            if skip >= len(chain_of_run):
                skip -= len(chain_of_run)
                continue
            for index in chain_of_run[skip:]:
                position += 1
                side = sides.get(index)
                yield position == total, index, (None, 0, side) if side else None
            skip = 0
    for first in groups:
        position += 1
        below = _Run(shape, first)
        # A group's first entry holds its run, then its own side branches.
        under: _Container = (below, 1, below.sides.pop(first, ()))
        yield position == total, first, under if below.length > 1 or under[2] else None


def _tree_walk(shape: TreeShape) -> Iterator[tuple[str, int]]:
    """Each entry with its guide prefix, in drawing order.

    A single root's run hangs from the title; several roots are groups. The active path
    goes on at one indent through every branch point, its side branches indented under the
    branch point. The walk keeps a stack of containers, not recursion: a session may branch
    thousands of times.
    """
    roots = shape.roots
    top: _Container = (_Run(shape, roots[0]), 0, ()) if len(roots) == 1 else (None, 0, roots)
    stack: list[tuple[Iterator[_Item], str]] = [(_items(shape, top), "")]
    while stack:
        items, prefix = stack[-1]
        middle, end = prefix + "├── ", prefix + "└── "
        for last, index, below in items:
            yield end if last else middle, index
            if below is not None:
                stack.append((_items(shape, below), prefix + ("    " if last else "│   ")))
                break
        else:
            stack.pop()


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


def write_lines(lines: Iterable[Line], console: Console, *, fit: bool = True) -> None:
    """Write each line to the console's file, never wrapping: with ``fit``, a line wider than
    the console is cut to one cell less and ends in an ellipsis, as ``rich`` draws a ``Text``
    with ``overflow="ellipsis"``. Styles become escape codes only where the console uses
    colour. Characters that would steer the terminal are written as ``\\u`` escapes
    (:func:`~ctxmodes.terminal_text.visible`). Lines are written a block at a time."""
    out = console.file
    width = console.width
    styles = _Styles(console) if console.color_system is not None else None
    written: list[str] = []
    for line in lines:
        text = "".join(map(_TEXT, line))
        if steers_a_terminal(text):
            line = [(visible(piece), style) for piece, style in line]
            text = "".join(map(_TEXT, line))
        # No character is wider than two cells: most lines need no measuring.
        if fit and 2 * len(text) > width and sum(map(cell_len, (p for p, _ in line))) > width:
            line = _cut(line, width - 1)
            text = "".join(map(_TEXT, line))
        if styles is not None:
            text = "".join([styles.wrap(piece, style) if style else piece for piece, style in line])
        written.append(text)
        if len(written) == _WRITE_BLOCK:
            out.write("\n".join(written) + "\n")
            written.clear()
    if written:
        out.write("\n".join(written) + "\n")
    out.flush()


_TEXT: Final = itemgetter(0)
# Lines joined into one write.
_WRITE_BLOCK: Final = 1024


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
