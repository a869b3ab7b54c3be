"""What the export page shows, computed from a session file: the tree as a flat stream of
tokens (so a deep or hostile tree never recurses), the active path, and Tree's archived
windows matched to the branch summaries that stand for them.

Everything here works on the stored JSON of each entry: a page must render any file the
store opens, including entries of unknown types and values of unexpected shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

from ctxmodes.compaction.summary_text import summary_goal
from ctxmodes.session.jsvalues import js_to_fixed

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.tree import SessionTreeNode

JsonObject = dict[str, Any]

#: Persisted custom types of the context-window contract and of Tree (format names).
MARKER_TYPE: Final = "codex-context-window"
NOTE_TYPE: Final = "codex-context-note"
NOTE_SNAPSHOT_TYPE: Final = "codex-context-note-snapshot"
ARCHIVE_TYPE: Final = "codex-context-tree-archive"

PREVIEW_CHARS: Final = 72

#: Pi's ``/tree`` filter classes: ``meta`` entries are hidden by the default filter.
Kind = Literal["user", "assistant", "tool", "bash", "custom", "summary", "compaction", "meta"]


@dataclass(frozen=True, slots=True)
class EntryView:
    id: str
    type: str
    kind: Kind
    title: str
    preview: str
    label: str | None
    active: bool
    stored: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Archive:
    """A side branch Tree archived: window ``number`` (when its marker is known), summarized
    by entry ``summary_id``."""

    root_id: str
    summary_id: str
    window_number: int | None
    #: The user navigated into the archived branch: it is on the active path, so the model
    #: sees it again.
    active: bool = False


class Token(NamedTuple):
    """One step of a tree walk: an entry, or the opening or closing of a branch (a tuple:
    a walk makes one for every entry)."""

    kind: Literal["entry", "open", "close"]
    entry: EntryView | None = None
    archive: Archive | None = None
    active: bool = False


_CLOSE: Final = Token("close")


@dataclass
class SessionView:
    title: str
    header: dict[str, Any]
    file_name: str
    entries: dict[str, EntryView]
    active_path: list[str]
    archives: dict[str, Archive]
    #: Summary entry id -> the archive it stands for.
    archive_of_summary: dict[str, Archive]
    roots: list[SessionTreeNode]
    children: dict[str, list[SessionTreeNode]] = field(default_factory=dict)
    window_count: int = 0
    note_count: int = 0
    usage: UsageTotals = field(default_factory=lambda: UsageTotals())
    #: The mode that manages the session, in words (``None``: not known).
    mode: str | None = None

    def sidebar(self, *, active_first: bool = False) -> Iterator[Token]:
        """The whole tree: runs of single children flat, each branch of a fork opened.

        :param active_first: at every fork (and among the roots) the branch holding the
            active path comes first, the others after it in tree order, as Pi's ``/tree``
            lists them; ``False``: tree order throughout."""
        return self._walk(self.roots, grouped=len(self.roots) > 1, active_first=active_first)

    def side_branches(self, entry_id: str) -> list[SessionTreeNode]:
        """Children of an active entry that leave the active path and are not archives
        (archives are shown under their summaries)."""
        active = self._active_set
        children = self.children.get(entry_id)
        if not children or (len(children) == 1 and children[0].entry_id in active):
            return []  # nearly every entry of the path: its one child is the next one
        return [
            child
            for child in children
            if child.entry_id not in active and child.entry_id not in self.archives
        ]

    def branch(self, node: SessionTreeNode) -> Iterator[Token]:
        """One side branch, from ``node`` down, leaving out archives (each is shown under
        its summary)."""
        return self._walk([node], grouped=False, skip=self.archives)

    def archive_root(self, archive: Archive) -> SessionTreeNode | None:
        return self._nodes.get(archive.root_id)

    def _walk(
        self,
        starts: list[SessionTreeNode],
        *,
        grouped: bool,
        skip: dict[str, Archive] | None = None,
        active_first: bool = False,
    ) -> Iterator[Token]:
        active = self._active_set
        left_out = skip or {}

        def ordered(nodes: list[SessionTreeNode]) -> list[SessionTreeNode]:
            if not active_first:
                return nodes
            # A node holds the leaf below it exactly when it is on the active path.
            return sorted(nodes, key=lambda node: node.entry_id not in active)

        # (node, opens a branch) pairs; a None node closes the branch opened last.
        stack: list[tuple[SessionTreeNode | None, bool]] = [
            (node, grouped) for node in reversed(ordered(starts))
        ]
        while stack:
            node, opens = stack.pop()
            if node is None:
                yield _CLOSE
                continue
            if opens:
                yield Token(
                    "open",
                    entry=self.entries[node.entry_id],
                    archive=self.archives.get(node.entry_id),
                    active=node.entry_id in active,
                )
                stack.append((None, False))
            yield Token("entry", entry=self.entries[node.entry_id])
            children = [c for c in node.children if c.entry_id not in left_out]
            while len(children) == 1:
                node = children[0]
                yield Token("entry", entry=self.entries[node.entry_id])
                children = [c for c in node.children if c.entry_id not in left_out]
            stack.extend((child, True) for child in reversed(ordered(children)))

    @cached_property
    def _active_set(self) -> set[str]:
        return set(self.active_path)

    @cached_property
    def _nodes(self) -> dict[str, SessionTreeNode]:
        nodes: dict[str, SessionTreeNode] = {}
        for siblings in [self.roots, *self.children.values()]:
            for node in siblings:
                nodes[node.entry_id] = node
        return nodes


def build_view(manager: SessionManager, file_name: str) -> SessionView:
    """The view of the session ``manager`` holds (opened read-only by the caller)."""
    roots = manager.get_tree()
    active_path = manager.get_branch_ids()
    active = set(active_path)
    children: dict[str, list[SessionTreeNode]] = {}
    entries: dict[str, EntryView] = {}
    windows: dict[str, int] = {}
    note_count = 0
    for node, found in _with_stored(manager, _every_node(roots)):
        stored = found or {}
        entries[node.entry_id] = describe(
            stored, node.entry_id, node.label, node.entry_id in active
        )
        if node.children:
            children[node.entry_id] = node.children
        window = _marker_window(stored)
        if window is not None:
            windows[window[0]] = window[1]
        if stored.get("customType") == NOTE_TYPE:
            note_count += 1
    archives = _archives(entries, children, windows, active)
    header = dict(manager.get_header_json())
    name = manager.get_session_name()
    return SessionView(
        title=name or _first_user_text(entries, active_path) or f"session {header.get('id')}",
        header=header,
        file_name=file_name,
        entries=entries,
        active_path=active_path,
        archives={archive.root_id: archive for archive in archives},
        archive_of_summary={archive.summary_id: archive for archive in archives},
        roots=roots,
        children=children,
        window_count=len(windows),
        note_count=note_count,
        usage=UsageTotals.of_path(entries[entry_id].stored for entry_id in active_path),
    )


#: Entries read from the session file in one pass.
_READ_BLOCK: Final = 4096


def _every_node(roots: list[SessionTreeNode]) -> list[SessionTreeNode]:
    """Every node of the tree, parents before their children."""
    nodes: list[SessionTreeNode] = []
    pending = list(roots)
    while pending:
        node = pending.pop()
        nodes.append(node)
        pending.extend(node.children)
    return nodes


def _with_stored(
    manager: SessionManager, nodes: list[SessionTreeNode]
) -> Iterator[tuple[SessionTreeNode, JsonObject | None]]:
    """Each node with its stored entry, read a block of entries at a time."""
    for first in range(0, len(nodes), _READ_BLOCK):
        block = nodes[first : first + _READ_BLOCK]
        stored = manager.read_entries_json([node.entry_id for node in block])
        yield from zip(block, stored, strict=True)


def _archives(
    entries: dict[str, EntryView],
    children: dict[str, list[SessionTreeNode]],
    windows: dict[str, int],
    active: set[str],
) -> list[Archive]:
    """The side branches claimed by archive manifests: the child of ``branchBaseId`` on the
    way up from ``archivedLeafId`` is the archived branch's first entry."""
    found: list[Archive] = []
    parents: dict[str, str] | None = None  # made for the first manifest: most have none
    for view in entries.values():
        stored = view.stored
        if stored.get("type") != "custom" or stored.get("customType") != ARCHIVE_TYPE:
            continue
        data = stored.get("data")
        if not isinstance(data, dict):
            continue
        leaf, base, summary = (
            data.get(k) for k in ("archivedLeafId", "branchBaseId", "summaryEntryId")
        )
        if not isinstance(leaf, str) or not isinstance(summary, str) or summary not in entries:
            continue
        base_id = base if isinstance(base, str) else None
        if parents is None:
            parents = {kid.entry_id: up for up, kids in children.items() for kid in kids}
        root = _child_below(leaf, base_id, parents)
        # The summary must stand beside the branch it replaces, not inside it.
        if root is None or _child_below(summary, base_id, parents) == root:
            continue
        window = data.get("windowId")
        number = windows.get(window) if isinstance(window, str) else None
        found.append(Archive(root, summary, number, active=root in active))
    return found


def _child_below(leaf: str, base: str | None, parents: dict[str, str]) -> str | None:
    current: str | None = leaf
    seen: set[str] = set()
    while current is not None and current not in seen:
        seen.add(current)
        parent = parents.get(current)
        if parent == base:
            return current
        current = parent
    return None


def _marker_window(stored: dict[str, Any]) -> tuple[str, int] | None:
    if stored.get("type") != "custom_message" or stored.get("customType") != MARKER_TYPE:
        return None
    details = stored.get("details")
    management = details.get("contextManagement") if isinstance(details, dict) else None
    if not isinstance(management, dict) or management.get("kind") != "window":
        return None
    window, number = management.get("currentWindowId"), management.get("windowNumber")
    if isinstance(window, str) and isinstance(number, int):
        return window, number
    return None


def marker_number(stored: dict[str, Any]) -> int | None:
    """The window number a stored marker opens, if it is one."""
    window = _marker_window(stored)
    return None if window is None else window[1]


@dataclass(slots=True)
class UsageTotals:
    """What the active path's answers cost: the last model that answered, the tokens of
    every answer added up, and their cost as each answer recorded it."""

    model: str | None = None
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def cost_text(self) -> str:
        """The cost as Pi's export writes it (``toFixed(3)``: a tie goes up)."""
        return js_to_fixed(self.cost, 3)

    @classmethod
    def of_path(cls, stored_entries: Iterable[dict[str, Any]]) -> UsageTotals:
        totals = cls()
        for stored in stored_entries:
            message = stored.get("message") if stored.get("type") == "message" else None
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            provider, model = message.get("provider"), message.get("model")
            if isinstance(model, str) and model:
                totals.model = f"{provider}/{model}" if isinstance(provider, str) else model
            usage = message.get("usage")
            if isinstance(usage, dict):
                totals.input += _count(usage.get("input"))
                totals.output += _count(usage.get("output"))
                totals.cache_read += _count(usage.get("cacheRead"))
                totals.cache_write += _count(usage.get("cacheWrite"))
                cost = usage.get("cost")
                total = cost.get("total") if isinstance(cost, dict) else None
                if isinstance(total, int | float) and not isinstance(total, bool):
                    totals.cost += float(total)
        return totals


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


#: How a line of Pi's display diff (``details.diff`` of ``edit``) is shown.
DiffLineKind = Literal["add", "del", "ctx"]


def diff_lines(details: Any) -> list[tuple[DiffLineKind, str]]:
    """The lines of a tool result's display diff, each with what it does; empty when the
    result carries none."""
    diff = details.get("diff") if isinstance(details, dict) else None
    if not isinstance(diff, str) or not diff:
        return []
    kinds: dict[str, DiffLineKind] = {"+": "add", "-": "del"}
    return [(kinds.get(line[:1], "ctx"), line) for line in diff.split("\n")]


def _first_user_text(entries: dict[str, EntryView], path: list[str]) -> str | None:
    for entry_id in path:
        view = entries[entry_id]
        if view.kind == "user" and view.preview:
            return view.preview
    return None


# ----------------------------------------------------------------------------- entries


def content_text(content: Any) -> str:
    """The text of a message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n".join(parts)


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(stored: dict[str, Any], entry_id: str, label: Any, active: bool) -> EntryView:
    """The sidebar line of one stored entry."""
    kind, title, text = _classify(stored)
    return EntryView(
        id=entry_id,
        type=str(stored.get("type", "unknown")),
        kind=kind,
        title=title,
        preview=one_line(text),
        label=label if isinstance(label, str) else None,
        active=active,
        stored=stored,
    )


def _classify(stored: dict[str, Any]) -> tuple[Kind, str, str]:
    entry_type = stored.get("type")
    if entry_type == "message":
        return _classify_message(stored.get("message"))
    if entry_type == "custom_message":
        number = marker_number(stored)
        custom = str(stored.get("customType", ""))
        if number is not None:
            return "custom", f"window {number}", "context window marker"
        return "custom", custom or "custom message", content_text(stored.get("content"))
    if entry_type == "branch_summary":
        # What the branch was about, not the fixed preamble every summary starts with.
        return "summary", "branch summary", summary_goal(stored.get("summary"))
    if entry_type == "compaction":
        return "compaction", "compaction", str(stored.get("summary", ""))
    if entry_type == "custom":
        custom = str(stored.get("customType", ""))
        data = stored.get("data")
        if custom == NOTE_TYPE and isinstance(data, dict):
            return "meta", "note", f"{data.get('action', '')} {data.get('path', '')}"
        return "meta", custom or "custom", ""
    if entry_type == "model_change":
        return "meta", "model", f"{stored.get('provider', '')}/{stored.get('modelId', '')}"
    if entry_type == "thinking_level_change":
        return "meta", "thinking", str(stored.get("thinkingLevel", ""))
    if entry_type == "label":
        return "meta", "label", str(stored.get("label", ""))
    if entry_type == "session_info":
        return "meta", "name", str(stored.get("name", ""))
    return "meta", str(entry_type or "unknown"), ""


def _classify_message(message: Any) -> tuple[Kind, str, str]:
    if not isinstance(message, dict):
        return "meta", "message", ""
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        return "user", "user", content_text(content)
    if role == "assistant":
        calls = (
            [
                str(block.get("name", ""))
                for block in content
                if isinstance(block, dict) and block.get("type") == "toolCall"
            ]
            if isinstance(content, list)
            else []
        )
        text = content_text(content)
        if not text and calls:
            text = "→ " + ", ".join(calls)
        elif not text:
            # What Pi's tree shows of a reply without text: why there is none.
            error = message.get("errorMessage")
            if message.get("stopReason") == "aborted":
                text = "(aborted)"
            elif isinstance(error, str) and error:
                text = error
            else:
                text = "(no content)"
        return "assistant", "assistant", text
    if role == "toolResult":
        return "tool", f"tool result: {message.get('toolName', '')}", content_text(content)
    if role == "bashExecution":
        return "bash", "shell", f"$ {message.get('command', '')}"
    if role == "custom":
        return "custom", str(message.get("customType", "custom")), content_text(content)
    return "meta", str(role or "message"), content_text(content)
