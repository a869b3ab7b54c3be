"""``/tree``: Pi's session navigator drawn as an inline picker. The active path is marked and
listed first at every fork, as Pi lists it, and Tree's archived windows are labelled side
branches. Its keys are Pi's actions, rebound in ``keybindings.json``: ↑/↓ move (round from
one end to the other), ←/→, Ctrl+B/F and PageUp/PageDown move a page of half the terminal's
height (stopping at the ends), Ctrl+D/T/U/L/A show one of Pi's filters (again: the default),
Ctrl+O cycles them, Ctrl+←/→ fold and unfold branch segments (or jump between segment
starts), Ctrl+X copies the selected entry, Shift+L edits its label, Shift+T shows when each
label was set, and Enter picks an entry, then whether to summarize the branch left. Typing
searches as Pi's does (:mod:`ctxmodes.tui.tree_search`), keeping the entry selected and opening
every fold; Esc or Ctrl+C empties the search before a second closes the tree."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Final, get_args

from ctxmodes.config import TreeFilter
from ctxmodes.tui.key_hints import input_hint
from ctxmodes.tui.picker import Picker, PickerItem
from ctxmodes.tui.picker_keys import LABEL_KEYS, TREE_KEYS
from ctxmodes.tui.tree_search import matches, query_words, searchable_text
from ctxmodes.tui.tree_text import (
    copy_text,
    is_bare_reply,
    label_time,
    status_labels,
    tree_hint,
)

if TYPE_CHECKING:
    from ctxmodes.export.view import SessionView
    from ctxmodes.tui.app import TerminalSession

#: Pi's ``/tree`` filters, in the order Ctrl+O cycles them.
TREE_FILTERS: Final[tuple[TreeFilter, ...]] = get_args(TreeFilter)
#: The filter each of Pi's direct filter actions shows (pressed again: the default).
FILTER_ACTIONS: Final[dict[str, TreeFilter]] = {
    "app.tree.filter.noTools": "no-tools",
    "app.tree.filter.userOnly": "user-only",
    "app.tree.filter.labeledOnly": "labeled-only",
    "app.tree.filter.all": "all",
}
TITLE: Final = "Session tree (● active path)"
#: Pi's words after ``app.message.copy``.
COPIED: Final = "Copied selected message to clipboard"
NOTHING_TO_COPY: Final = "Selected entry has no text to copy"
FOLDED: Final = "⊞ "
FOLDABLE: Final = "⊟ "
#: Pi's fewest rows shown, and moved by a page, however short the terminal.
MIN_PAGE_ROWS: Final = 5


def page_rows(terminal_rows: int) -> int:
    """How many rows Pi's navigator shows and moves by a page: half the terminal's height,
    at least :data:`MIN_PAGE_ROWS`."""
    return max(MIN_PAGE_ROWS, terminal_rows // 2)


@dataclass(frozen=True, slots=True)
class _Row:
    #: The entry the row shows; for a heading, the entry its branch opens with.
    entry_id: str
    heading: str | None
    kind: str
    label: str | None
    #: When the label was set, as stored.
    label_timestamp: str | None
    depth: int
    active: bool
    title: str
    preview: str
    within: str | None
    #: What typing matches, lower-cased (see :func:`searchable_text`; none for a heading).
    search: str = ""
    #: For a heading, the index just past the last row of its branch.
    branch_end: int = 0
    #: A reply with no text (tool calls only) that Pi's tree leaves out whatever the
    #: filter: not the current leaf, it is never shown.
    left_out: bool = False


@dataclass
class _Shape:
    """Where each entry sits in the tree (filters and folds do not change it)."""

    parent: dict[str, str] = field(default_factory=dict)


@dataclass
class _Shown:
    """The tree as shown, as Pi's navigator folds and moves in it: each entry shown under
    its nearest shown ancestor, children in the order listed."""

    parent: dict[str, str | None] = field(default_factory=dict)
    children: dict[str | None, list[str]] = field(default_factory=dict)

    def foldable(self, entry_id: str) -> bool:
        """Pi's rule: an entry with children shown that is a root or starts a branch
        segment (its shown parent has more than one child shown)."""
        if not self.children.get(entry_id):
            return False
        parent = self.parent.get(entry_id)
        return parent is None or len(self.children.get(parent, ())) > 1


class TreeNavigator:
    """The navigator's state across the label editor it opens: the filter, the folds and the
    selection survive it."""

    def __init__(self, session: TerminalSession) -> None:
        self.session = session
        self.filter = TREE_FILTERS.index(session.settings.tree_filter)
        self.folded: set[str] = set()
        #: Labels are followed by the time they were set (Pi's Shift+T).
        self.label_times = False
        self.selected_id: str | None = session.agent.session_manager.get_leaf_id()
        self._rows: list[_Row] = []
        self._shape = _Shape()
        self._shown = _Shown()
        self.picker: Picker | None = None

    # ------------------------------------------------------------------ building

    def load(self) -> None:
        """Read the tree from the session (again, after a label changed)."""
        from ctxmodes.export.view import build_view

        manager = self.session.agent.session_manager
        view = build_view(manager, manager.session_file.name if manager.session_file else "")
        self._shape = _shape_of(view)
        rows = _rows_of(view)
        stored = manager.read_entries_json([row.entry_id for row in rows])
        leaf = manager.get_leaf_id()
        self._rows = [
            row
            if row.heading is not None
            else replace(
                row,
                label_timestamp=manager.get_label_timestamp(row.entry_id) if row.label else None,
                search=searchable_text(entry, row.label),
                left_out=row.entry_id != leaf and is_bare_reply(entry),
            )
            for row, entry in zip(rows, stored, strict=True)
        ]

    def open(self) -> None:
        self.load()
        rows = page_rows(self.session.height)
        picker = Picker(
            TITLE,
            self._visible,
            self._picked,
            hint=tree_hint(self.session.keymap),
            wraps=True,
            visible_rows=rows,
            page_size=rows,
            reselect=self._query_changed,
            clears_query_first=True,
            query_label="  Type to search: ",
            positioned=True,
            empty="  No entries found",
            stays_open_unmatched=True,
            drops_paste=True,
            key_order=TREE_KEYS,
            line_editor=False,  # Pi's tree selector types at the end and takes Backspace only
        )
        picker.actions = {
            "app.tree.foldOrUp": self.fold_or_up,
            "app.tree.unfoldOrDown": self.unfold_or_down,
            "tui.editor.cursorLeft": lambda: picker.page(-1),
            "tui.editor.cursorRight": lambda: picker.page(1),
            "app.tree.editLabel": self.edit_label,
            "app.tree.toggleLabelTimestamp": self.toggle_label_times,
            "app.message.copy": self.copy_selected,
            "app.tree.filter.default": lambda: self._show_filter("default"),
            "app.tree.filter.cycleForward": lambda: self._cycle(1),
            "app.tree.filter.cycleBackward": lambda: self._cycle(-1),
            **{
                action: partial(self._toggle_filter, mode)
                for action, mode in FILTER_ACTIONS.items()
            },
        }
        self.picker = picker
        self._title()
        self._select(self.selected_id)
        self.session.open_picker(picker)

    def _visible(self, query: str) -> list[PickerItem]:
        """The rows the filter, the search and the folds show, as Pi's tree shows them; a
        heading is shown when an entry of its branch is."""
        mode = TREE_FILTERS[self.filter]
        words = query_words(query)
        hidden: set[str] = set()
        # shown_before[i]: how many entries among the first i rows are shown.
        shown_before = [0]
        for row in self._rows:
            shows = row.heading is None and self._shows(row, mode, words, hidden)
            shown_before.append(shown_before[-1] + shows)
        kept = [
            row
            for index, row in enumerate(self._rows)
            if shown_before[index + 1] > shown_before[index]
            or (row.heading is not None and shown_before[row.branch_end] > shown_before[index])
        ]
        self._shown = self._shown_tree(kept)
        return [self._item(row) for row in kept]

    def _shows(self, row: _Row, mode: TreeFilter, words: list[str], hidden: set[str]) -> bool:
        """Whether an entry is shown; one folded away joins ``hidden``, with its branch."""
        parent = self._shape.parent.get(row.entry_id)
        if parent is not None and (parent in self.folded or parent in hidden):
            hidden.add(row.entry_id)
            return False
        return (
            not row.left_out
            and _filter_keeps(mode, row.kind, row.label is not None)
            and matches(words, row.search)
        )

    def _shown_tree(self, kept: list[_Row]) -> _Shown:
        shown_ids = {row.entry_id for row in kept if row.heading is None}
        tree = _Shown()
        for row in kept:
            if row.heading is not None:
                continue
            parent = self._shape.parent.get(row.entry_id)
            while parent is not None and parent not in shown_ids:
                parent = self._shape.parent.get(parent)
            tree.parent[row.entry_id] = parent
            tree.children.setdefault(parent, []).append(row.entry_id)
        return tree

    def _item(self, row: _Row) -> PickerItem:
        if row.heading is not None:
            fragments = [("class:picker.archived", "  " * row.depth + row.heading)]
            return PickerItem(None, row.heading, fragments)
        mark = "● " if row.active else "  "
        fold = ""
        if row.entry_id in self.folded:
            fold = FOLDED
        elif self._shown.foldable(row.entry_id):
            fold = FOLDABLE
        label = f" [{row.label}]" if row.label else ""
        if label and self.label_times and row.label_timestamp:
            label += f" {label_time(row.label_timestamp)}".rstrip()
        where = f" · {row.within} (hidden from the model)" if row.within else ""
        fragments = [
            (
                "class:picker.active" if row.active else "",
                "  " * row.depth + mark + fold + row.title,
            ),
            ("class:picker.archived", label + where),
            ("class:picker.hint", " " + row.preview),
        ]
        return PickerItem(row.entry_id, row.search, fragments)

    # ------------------------------------------------------------------ keys

    def _current(self) -> str | None:
        assert self.picker is not None
        rows = self.picker.rows()
        if not rows:
            return None
        key = rows[self.picker.selected].key
        return None if key is None else str(key)

    def _select(self, entry_id: str | None) -> None:
        """Select ``entry_id``, or the nearest ancestor shown when it is hidden or folded
        away, or, with none of them shown, the last row (as Pi does)."""
        assert self.picker is not None
        self.picker.refresh()
        rows = self.picker.rows()
        index_of = {item.key: i for i, item in enumerate(rows) if item.key}
        current = entry_id
        while current is not None and current not in index_of:
            current = self._shape.parent.get(current)
        self.picker.selected = index_of.get(current, max(0, len(rows) - 1))

    def _query_changed(self, selected: object) -> None:
        """Typing, Backspace or Esc changed the search: as in Pi, every fold opens and the
        entry selected stays so (or its nearest ancestor shown, else the last row); when no
        row was shown, the entry selected before stays the one to return to."""
        if selected is not None:
            self.selected_id = str(selected)
        self.folded.clear()
        self._select(self.selected_id)

    def fold_or_up(self) -> None:
        """Ctrl+← (``app.tree.foldOrUp``): fold the selected branch segment, or go to the
        previous segment start shown (the root when there is none)."""
        current = self._current()
        if current is None:
            return
        if self._shown.foldable(current) and current not in self.folded:
            self.folded.add(current)
            self._select(current)
            return
        shown = self._shown_ids()
        here = shown.get(current, 0)
        node = current
        while True:
            parent = self._shown.parent.get(node)
            if parent is None:
                break
            if len(self._shown.children.get(parent, ())) > 1 and shown.get(node, here) < here:
                break
            node = parent
        self._select(node)

    def unfold_or_down(self) -> None:
        """Ctrl+→ (``app.tree.unfoldOrDown``): unfold the selected segment, or go to the next
        segment start shown, down the first branch listed (the branch's end when there is
        none)."""
        current = self._current()
        if current is None:
            return
        if current in self.folded:
            self.folded.discard(current)
            self._select(current)
            return
        node = current
        while True:
            below = self._shown.children.get(node, [])
            if not below:
                break
            node = below[0]
            if len(below) > 1:
                break
        self._select(node)

    def _shown_ids(self) -> dict[str, int]:
        assert self.picker is not None
        return {str(item.key): i for i, item in enumerate(self.picker.rows()) if item.key}

    def edit_label(self) -> None:
        """Shift+L: type the selected entry's label (empty clears it); back to the tree."""
        entry_id = self._current()
        if entry_id is None:
            return
        self.selected_id = entry_id
        current = next((r.label for r in self._rows if r.entry_id == entry_id), None) or ""
        editor = Picker(
            f"Label for {entry_id}",
            lambda query: [],
            lambda typed: self._save_label(entry_id, str(typed.key)),
            on_cancel=self.open,
            hint=input_hint(self.session.keymap, "save"),
            free_text=True,
            query=current,  # as Pi sets a new label field's text: the cursor at the start
            key_order=LABEL_KEYS,
        )
        self.session.open_picker(editor)

    def _save_label(self, entry_id: str, label: str) -> None:
        session = self.session
        agent = session.agent

        def job() -> None:
            agent.session_manager.append_label(entry_id, label.strip() or None)
            session.call_soon(self.open)

        agent.run_soon(job)

    def toggle_label_times(self) -> None:
        """Shift+T: each label followed by when it was set, or not."""
        self.label_times = not self.label_times
        self._title()
        self._select(self._current())

    def copy_selected(self) -> None:
        """Ctrl+X: the selected entry's text to the clipboard (OSC 52)."""
        from ctxmodes.tui.actions import copy_to_clipboard

        entry_id = self._current()
        stored = None
        if entry_id is not None:
            stored = self.session.agent.session_manager.get_entry_json(entry_id)
        text = copy_text(stored) if stored is not None else None
        if text is None:
            self.session.notify(NOTHING_TO_COPY, "error")
            return
        copy_to_clipboard(self.session, text)
        self.session.notify(COPIED)

    def _toggle_filter(self, mode: TreeFilter) -> None:
        """A direct filter key: its filter, or the default when it is shown already."""
        self._show_filter("default" if TREE_FILTERS[self.filter] == mode else mode)

    def _cycle(self, step: int) -> None:
        self._show_filter(TREE_FILTERS[(self.filter + step) % len(TREE_FILTERS)])

    def _show_filter(self, mode: TreeFilter) -> None:
        # A filter that shows nothing keeps the entry selected before it, for the next one.
        self.selected_id = self._current() or self.selected_id
        self.filter = TREE_FILTERS.index(mode)
        self.folded.clear()  # as Pi does: a new view starts unfolded
        self._title()
        self._select(self.selected_id)

    def _title(self) -> None:
        assert self.picker is not None
        self.picker.title = TITLE + status_labels(TREE_FILTERS[self.filter], self.label_times)

    def _picked(self, item: PickerItem) -> None:
        if item.key is None:
            self.session.notify("That line is a branch heading; pick an entry")
            return
        entry_id = str(item.key)
        if entry_id == self.session.agent.session_manager.get_leaf_id():
            self.session.notify("Already at this point")
            return
        from ctxmodes.tui.actions import choose_summary

        choose_summary(self.session, entry_id, reopen=partial(open_tree_at, self.session, entry_id))


def open_tree_at(session: TerminalSession, entry_id: str) -> None:
    """The tree again after Esc on the summary question or a summary stopped: a new
    navigator on the entry picked, as Pi opens a new selector there (the configured filter,
    nothing folded, no search, label times hidden)."""
    navigator = TreeNavigator(session)
    navigator.selected_id = entry_id
    navigator.open()


def open_tree(session: TerminalSession, args: str) -> None:
    """``/tree`` (and Esc Esc while idle)."""
    TreeNavigator(session).open()


def _filter_keeps(mode: str, kind: str, labeled: bool) -> bool:
    if mode == "all":
        return True
    if mode == "user-only":
        return kind == "user"
    if mode == "labeled-only":
        return labeled
    if mode == "no-tools":
        return kind not in ("tool", "meta")
    return kind != "meta"


def _shape_of(view: SessionView) -> _Shape:
    shape = _Shape()
    stack = list(view.roots)
    while stack:
        node = stack.pop()
        for child in node.children:
            shape.parent[child.entry_id] = node.entry_id
        stack.extend(node.children)
    return shape


def _rows_of(view: SessionView) -> list[_Row]:
    rows: list[_Row] = []
    # The archived window each open branch belongs to (None for other branches).
    windows: list[str | None] = []
    # For each open branch, the index of its heading (None: it has none).
    headings: list[int | None] = []
    for token in view.sidebar(active_first=True):
        if token.kind == "open":
            archived = None
            headings.append(None)
            if token.archive is not None and token.entry is not None:
                number = token.archive.window_number
                archived = f"archived window {'?' if number is None else number}"
                heading = archived
                summary = view.entries.get(token.archive.summary_id)
                if summary is not None and summary.preview:
                    heading += f" · {summary.preview}"
                headings[-1] = len(rows)
                rows.append(
                    _Row(
                        token.entry.id,
                        heading,
                        "fork",
                        None,
                        None,
                        len(windows) + 1,
                        False,
                        "",
                        "",
                        None,
                    )
                )
            windows.append(archived or (windows[-1] if windows else None))
            continue
        if token.kind == "close":
            windows.pop()
            _end_branch(rows, headings.pop())
            continue
        entry = token.entry
        assert entry is not None
        rows.append(
            _Row(
                entry.id,
                None,
                entry.kind,
                entry.label or None,
                None,
                len(windows),
                entry.active,
                entry.title,
                entry.preview,
                windows[-1] if windows else None,
            )
        )
    for heading_index in headings:
        _end_branch(rows, heading_index)
    return rows


def _end_branch(rows: list[_Row], heading_index: int | None) -> None:
    """A branch closed: its heading, if any, learns where the branch ends."""
    if heading_index is not None:
        rows[heading_index] = replace(rows[heading_index], branch_end=len(rows))
