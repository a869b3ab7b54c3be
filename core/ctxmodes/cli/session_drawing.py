"""``ctxmodes session show``: the active path at one indent, side branches collapsed.

A managed session forks at every rollover (Tree keeps each finished window as a side branch
of the session tree), so a drawing that indents at each branch point goes one level deeper
per window, and after a dozen windows ids break into fragments. Instead every entry of the
active path is one line at the same indent, and each side branch that leaves it is one line
under its branch point: the window it holds (window number from its marker), how many
entries it has, and the first line of the goal of the branch summary made of it. ``--full``
draws the whole tree (:func:`ctxmodes.session.report.render_tree`).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ctxmodes.compaction import summary_goal
from ctxmodes.errors import CtxmodesError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.tree import SessionTreeNode
from ctxmodes.windows.marker import stored_marker_details

__all__ = ["draw_active_path"]


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
        for node in (n for root in roots for n in _subtree(root)):
            if node.entry_type == "branch_summary":
                stored = manager.get_entry_json(node.entry_id) or {}
                source = stored.get("fromId")
                if isinstance(source, str):
                    self._summaries[source] = summary_goal(stored.get("summary"))

    def entry(self, node: SessionTreeNode) -> Text:
        text = Text(node.entry_id, style="bold cyan")
        entry_type = node.entry_type if isinstance(node.entry_type, str) else "?"
        stored: dict[str, Any] = {}
        if entry_type in ("message", "custom", "custom_message"):
            stored = self._manager.get_entry_json(node.entry_id) or {}
        if entry_type == "message":
            message = stored.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            text.append(f" {role or 'message'}", style="green")
        else:
            text.append(f" {entry_type}", style="magenta")
            custom_type = stored.get("customType")
            if isinstance(custom_type, str):
                text.append(f" {custom_type}", style="magenta")
            window = self._window_name(node, stored)
            if window is not None:
                text.append(f" ({window})", style="bold")
        if node.label is not None:
            text.append(f" [{node.label}]", style="yellow")
        return text

    def side_branch(self, node: SessionTreeNode) -> Text:
        members = _subtree(node)
        stored = self._manager.get_entry_json(node.entry_id) or {}
        what = self._window_name(node, stored) or f"side branch from {node.entry_id}"
        text = Text("  ⎇ ", style="dim")
        text.append(what, style="bold")
        text.append(f" · {len(members)} {'entry' if len(members) == 1 else 'entries'}")
        summary = next(
            (self._summaries[m.entry_id] for m in members if m.entry_id in self._summaries), None
        )
        if summary:
            text.append(f" · {summary}", style="italic")
        return text

    @staticmethod
    def _window_name(node: SessionTreeNode, stored: dict[str, Any]) -> str | None:
        if node.entry_type != "custom_message":
            return None
        try:
            details = stored_marker_details(stored)
        except CtxmodesError:  # a damaged marker is drawn as any other entry
            return None
        return None if details is None else f"window {details.window_number}"


def draw_active_path(manager: SessionManager) -> RenderableType:
    """The session as its active path, one entry per line, with every side branch collapsed
    into one line (window number, entry count, summary head). Lines never wrap: what does
    not fit the console width ends in an ellipsis."""
    roots = manager.get_tree()
    describe = _Describer(manager, roots)
    active = manager.get_branch_ids()
    on_path = set(active)
    leaf_id = manager.get_leaf_id()
    title = manager.get_session_name() or manager.session_id
    lines: list[Text] = [Text(f"session {title}", style="bold")]

    def collapsed(nodes: list[SessionTreeNode]) -> None:
        lines.extend(describe.side_branch(n) for n in nodes if n.entry_id not in on_path)

    path_root = next((root for root in roots if root.entry_id in on_path), None)
    collapsed([root for root in roots if root is not path_root])
    node = path_root
    while node is not None:
        line = Text("● ", style="bold green") + describe.entry(node)
        if node.entry_id == leaf_id:
            line.append("  ◀ leaf", style="bold green")
        lines.append(line)
        collapsed(node.children)
        node = next((child for child in node.children if child.entry_id in on_path), None)
    if leaf_id is None:
        lines.append(Text("(no leaf: the next entry starts a new root)", style="dim"))
    for line in lines:
        line.no_wrap = True
        line.overflow = "ellipsis"
    return Group(*lines)
