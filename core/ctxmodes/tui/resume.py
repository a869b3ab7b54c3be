"""The ``/resume`` and ``-r`` picker, as Pi's session selector: this folder's sessions, or
with Tab (``tui.input.tab``) every folder's, listed the first time they are asked for. Each
list shows at once from the files' heads (see :mod:`ctxmodes.tui.heads`) while the files are
read whole in the background (the header counts them), for Pi's search of every message's
text and Pi's times (see :mod:`ctxmodes.tui.session_info`). Typing searches as Pi's does:
fuzzy words, ``"exact phrases"`` and ``re:`` patterns (see :mod:`ctxmodes.tui.session_search`).
A pattern searches within a time budget: the line under the title says how many sessions it
was too slow for, left out, or that it was too large to compile (:func:`search_note`).

As in Pi's picker, the selected session is renamed (``app.session.rename``, Ctrl+R: a line
prefilled with its name) or deleted (``app.session.delete``, Ctrl+D, after a confirmation;
``app.session.deleteNoninvasive`` while nothing is typed), the current session never; Ctrl+N
(``app.session.toggleNamedFilter``) lists named sessions only, Ctrl+P
(``app.session.togglePath``) shows each session's file, and Ctrl+S
(``app.session.toggleSort``) cycles Pi's orders (see :mod:`ctxmodes.tui.session_order`).

It is laid out as Pi's: the two hint lines under the title (a confirmation or a notice in
their place), ten rows at a time drawn as Pi's (see :func:`~ctxmodes.tui.resume_rows.head_row`)
and Pi's ``(3/12)`` under them when not all show."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.session.jsvalues import js_trim
from ctxmodes.session.paths import cwd_filter, resolve_path
from ctxmodes.tui.heads import SessionHead, list_every_folder, list_heads
from ctxmodes.tui.key_hints import CANCEL, CONFIRM
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.line_field import LineField
from ctxmodes.tui.picker import Pairs, Picker, PickerItem, PickerQuestion
from ctxmodes.tui.picker_keys import SESSION_KEYS
from ctxmodes.tui.resume_rows import (
    CURSOR,
    RowLook,
    Scope,
    delete_question,
    empty_line,
    head_row,
    hint_lines,
    search_text,
)
from ctxmodes.tui.session_files import delete_session_file, name_session_file
from ctxmodes.tui.session_info import read_session_info
from ctxmodes.tui.session_order import SORT_LABELS, SORT_MODES, SortMode, threaded
from ctxmodes.tui.session_search import TOO_LARGE, SearchResult, filter_and_sort
from ctxmodes.tui.text_wrap import truncate_to_width

__all__ = [
    "CURRENT_NOT_DELETED",
    "EMPTY_NAME",
    "RENAME_TITLE",
    "SCOPE_WORDS",
    "TITLES",
    "VISIBLE_SESSIONS",
    "ResumePicker",
    "every_folder_root",
    "rename_hint",
    "search_note",
]

#: Pi's refusal, word for word.
CURRENT_NOT_DELETED: Final = "Cannot delete the currently active session"
#: Pi's picker keeps asking without a word when the name is empty; this says why.
EMPTY_NAME: Final = "A session name cannot be empty"
#: Pi's title when renaming.
RENAME_TITLE: Final = "Rename Session"
#: How many sessions Pi's selector shows at once.
VISIBLE_SESSIONS: Final = 10
#: The columns rows are cut to before the picker is first drawn.
_UNDRAWN_WIDTH: Final = 80

#: Pi's titles of the two scopes.
TITLES: Final[dict[Scope, str]] = {
    "current": "Resume Session (Current Folder)",
    "all": "Resume Session (All)",
}
#: Pi's words for the scope, the chosen one marked.
SCOPE_WORDS: Final[dict[Scope, str]] = {
    "current": "◉ Current Folder | ○ All",
    "all": "○ Current Folder | ◉ All",
}


def rename_hint(keymap: KeyMap) -> str:
    """Pi's hint when renaming, with the keys bound to save and cancel."""
    return f"{keymap.text(CONFIRM)} to save · {keymap.text(CANCEL)} to cancel"


def search_note(found: SearchResult[SessionHead]) -> str | None:
    """What the picker says of a search that could not list every match: a ``re:`` pattern
    refused for its size, or one too slow to search some sessions in, which are left out."""
    if found.too_large:
        return TOO_LARGE
    if found.too_slow == 1:
        return "Pattern too slow for 1 session: it is left out"
    if found.too_slow:
        return f"Pattern too slow for {found.too_slow} sessions: they are left out"
    return None


def every_folder_root(cwd: str | os.PathLike[str], directory: Path) -> Path | None:
    """Where the All scope lists sessions from, as Pi's: when ``directory`` is Pi's own
    folder for ``cwd``, every folder of the sessions folder it is in (returned); in a folder
    every project shares, that folder whole (``None``)."""
    return directory.parent if cwd_filter(cwd, directory) is None else None


class ResumePicker:
    """:param cwd: in a folder every project shares, the project whose sessions the current
        scope lists (see :func:`~ctxmodes.session.paths.cwd_filter`).
    :param every_folder: the folder whose every subfolder the All scope lists (see
        :func:`every_folder_root`); ``None``: it lists ``directory`` whole.
    :param wake: called (from a loading thread) when the rows changed.
    :param current: the session being run, which is not deleted, and is renamed through
        ``rename_current`` (the live session, whose writer holds its file).
    :param keymap: the keys of renaming and deleting (Pi's defaults when not given).
    :param clock: the time now, in seconds since the epoch, from which ages are told."""

    def __init__(
        self,
        directory: Path,
        on_pick: Callable[[Path], None],
        *,
        cwd: str | None = None,
        every_folder: Path | None = None,
        wake: Callable[[], None] = lambda: None,
        current: Path | None = None,
        rename_current: Callable[[str], None] | None = None,
        keymap: KeyMap | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        heads = list_heads(directory)
        if cwd is not None:
            # A directory every project shares: this project's sessions, as Pi lists them.
            mine = resolve_path(cwd)
            heads = [head for head in heads if head.cwd and resolve_path(head.cwd) == mine]
        self._directory = directory
        self._every_folder = every_folder
        self._current = os.path.realpath(current) if current is not None else None
        self._keymap = keymap if keymap is not None else KeyMap.load(None)
        self._clock = clock
        self._real_paths: dict[Path, str] = {}
        self.scope: Scope = "current"
        self.sort: SortMode = "threaded"
        self.named_only = False
        self.path_shown = False
        self._rename_current = rename_current
        self.wake = wake
        self._lock = threading.Lock()
        self._lists: dict[Scope, list[SessionHead]] = {}
        #: The scopes whose files are being read, and how many of them are (none yet: ``None``).
        self._progress: dict[Scope, tuple[int, int] | None] = {}
        self._deleted: set[Path] = set()
        self._threads: list[threading.Thread] = []
        #: Loads made but not started: they start once the rows are first made, so that
        #: reading the files whole does not slow the first rows shown.
        self._pending: list[threading.Thread] = []
        self._rename_line = LineField()
        self.picker = Picker(
            TITLES["current"],
            self.rows,
            lambda item: on_pick(item.key),
            keeps_place=True,  # Pi keeps the selected place as the list changes
            key_order=SESSION_KEYS,
            cursor=CURSOR,
            cursor_style="class:picker.active",
            selected_style="class:picker.session_selected",
            fits_width=True,
            visible_rows=VISIBLE_SESSIONS,
            page_size=VISIBLE_SESSIONS,
            counted=False,
            bottom_line=False,
            # Pi's non-invasive delete: with a query typed, its key edits the query.
            typing_passes=frozenset({"app.session.deleteNoninvasive"}),
            actions={
                "tui.input.tab": self.toggle_scope,
                "app.session.rename": self.rename_selected,
                "app.session.delete": self.delete_selected,
                "app.session.deleteNoninvasive": self.delete_selected,
                "app.session.toggleSort": self.toggle_sort,
                "app.session.toggleNamedFilter": self.toggle_named,
                "app.session.togglePath": self.toggle_path,
            },
        )
        #: What the search typed could not do (see :func:`search_note`), said under the title.
        self.search_note: str | None = None
        self.picker.header = self._header_lines
        self.picker.details = self._scroll_line
        self._list("current", heads)

    @property
    def heads(self) -> list[SessionHead]:
        """The sessions of the scope shown."""
        with self._lock:
            return self._lists[self.scope]

    def _list(self, scope: Scope, heads: list[SessionHead]) -> None:
        """Show ``heads`` in ``scope`` at once, and read their files whole in the background
        for Pi's search text and times (the header counts them meanwhile)."""
        with self._lock:
            self._lists[scope] = heads
            self._progress[scope] = None
        thread = threading.Thread(
            target=self._load, args=(scope, heads), name="ctxmodes-resume-load", daemon=True
        )
        self._pending.append(thread)
        self._describe()

    def _start_loads(self) -> None:
        while self._pending:
            thread = self._pending.pop(0)
            self._threads.append(thread)
            thread.start()

    def _load(self, scope: Scope, heads: list[SessionHead]) -> None:
        loaded: list[SessionHead] = []
        for done, head in enumerate(heads, start=1):
            info = read_session_info(head)
            if info is not None:
                loaded.append(info)
            with self._lock:
                self._progress[scope] = (done, len(heads))
            self._title()
            self.wake()
        loaded.sort(key=lambda head: head.modified_ms, reverse=True)  # Pi's order, stably
        with self._lock:
            # A session renamed or deleted meanwhile stays so.
            names = {head.path: head.name for head in self._lists[scope]}
            self._lists[scope] = [
                dataclasses.replace(head, name=names[head.path]) if head.path in names else head
                for head in loaded
                if head.path not in self._deleted
            ]
            del self._progress[scope]
        self._describe()
        self.wake()

    def join_load(self, timeout: float | None = None) -> None:
        """Wait until the files listed so far are read whole."""
        self._start_loads()
        for thread in list(self._threads):
            thread.join(timeout)

    def rows(self, query: str) -> list[PickerItem]:
        heads = self.heads
        if self.named_only:
            heads = [head for head in heads if head.name and js_trim(head.name)]
        self.search_note = None
        if self.sort == "threaded" and not js_trim(query):
            listed = threaded(heads)
        else:
            found = filter_and_sort(
                heads, query, self.sort == "recent", search_text, lambda head: head.modified_ms
            )
            self.search_note = search_note(found)
            listed = [(head, "") for head in found.sessions]
        width = self.picker.width or _UNDRAWN_WIDTH
        now_ms = round(self._clock() * 1000)
        made = [
            head_row(
                head,
                width,
                now_ms,
                RowLook(tree, self.scope == "all", self.path_shown, self._is_current(head)),
            )
            for head, tree in listed
        ]
        self._start_loads()
        return made

    def _header_lines(self) -> list[Pairs]:
        """Pi's two hint lines, or in their place the delete's question or a notice (and
        an empty line), each cut to the terminal's width."""
        picker = self.picker
        width = picker.width or _UNDRAWN_WIDTH
        if picker.question is not None and picker.question.answer is None:
            said = ("class:picker.error", delete_question(self._keymap))
        elif picker.notice is not None:
            said = picker.notice
        else:
            lines = hint_lines(self._keymap, self.path_shown, width)
            if self.search_note is not None:
                # In place of the line about the search's forms; the keys stay.
                note = truncate_to_width(self.search_note, width, "…")
                return [[("class:picker.warning", note)], [("class:picker.hint", lines[1])]]
            return [[("class:picker.hint", line)] for line in lines]
        style, text = said
        return [[(style, truncate_to_width(text, width, "…"))], []]

    def _scroll_line(self) -> Sequence[str]:
        """Pi's ``(3/12)`` under the rows when not all of them show."""
        count = len(self.picker.rows())
        if count <= VISIBLE_SESSIONS:
            return []
        place = f"  ({self.picker.selected + 1}/{count})"
        return [truncate_to_width(place, self.picker.width or _UNDRAWN_WIDTH, "")]

    # ------------------------------------------------------------ Pi's toggles

    def toggle_scope(self) -> None:
        """This folder's sessions, or every folder's (listed the first time)."""
        self.scope = "all" if self.scope == "current" else "current"
        if self.scope in self._lists:
            self._describe()
        elif self._every_folder is not None:
            self._list("all", list_every_folder(self._every_folder))
        else:
            self._list("all", list_heads(self._directory))

    def toggle_sort(self) -> None:
        """The next of Pi's orders: threaded, recent, fuzzy."""
        self.sort = SORT_MODES[(SORT_MODES.index(self.sort) + 1) % len(SORT_MODES)]
        self._describe()

    def toggle_named(self) -> None:
        """Named sessions only, or every session again."""
        self.named_only = not self.named_only
        self._describe()

    def toggle_path(self) -> None:
        """Each session's file named in its row, or not."""
        self.path_shown = not self.path_shown
        self._describe()

    def _title(self) -> None:
        """Pi's header: the scope's title, which scope is shown (or how far the reading of
        its files has got), the name filter and the order."""
        with self._lock:
            loading = self.scope in self._progress
            progress = self._progress.get(self.scope)
        scope = SCOPE_WORDS[self.scope]
        if loading:
            done = f"{progress[0]}/{progress[1]}" if progress is not None else "..."
            scope = f"○ Current Folder | Loading {done}"
        name = "Named" if self.named_only else "All"
        sort = SORT_LABELS[self.sort]
        self.picker.title = f"{TITLES[self.scope]}  {scope}  Name: {name}  Sort: {sort}"

    def _describe(self) -> None:
        """The header and empty line for the scope and toggles in force; the rows again."""
        picker = self.picker
        self._title()
        picker.empty = empty_line(self._keymap, self.scope, self.named_only)
        picker.refresh()

    # ------------------------------------------------------------ renaming and deleting

    def _selected(self) -> SessionHead | None:
        rows = self.picker.rows()
        if not rows:
            return None
        chosen = rows[self.picker.selected].key
        return next((head for head in self.heads if head.path == chosen), None)

    def _is_current(self, head: SessionHead) -> bool:
        if self._current is None:
            return False
        # Each row asks at every key: a file's real path is looked up once.
        real = self._real_paths.get(head.path)
        if real is None:
            real = self._real_paths[head.path] = os.path.realpath(head.path)
        return real == self._current

    def rename_selected(self) -> None:
        """Ask for the selected session's new name, its name so far typed in."""
        head = self._selected()
        if head is not None:
            self._ask_name(head, head.name or "")

    def _ask_name(self, head: SessionHead, typed: str) -> None:
        # One line for every rename, as Pi's selector keeps one rename field: each name is
        # set into it, the cursor staying where the last rename left it (at first the start).
        self.picker.ask(
            PickerQuestion(
                RENAME_TITLE,
                lambda answer: self._rename(head, answer),
                answer=typed,
                hint=rename_hint(self._keymap),
                line=self._rename_line,
            )
        )

    def _rename(self, head: SessionHead, answer: str) -> None:
        # As the session manager stores it: one line, no surrounding blanks.
        name = " ".join(answer.splitlines()).strip()
        if not name:
            self._ask_name(head, answer)
            self.picker.say(EMPTY_NAME, error=True)
            return
        try:
            if self._is_current(head) and self._rename_current is not None:
                self._rename_current(name)
            else:
                name_session_file(head.path, name)
        except (CtxmodesError, OSError) as error:
            self.picker.say(f"Failed to rename: {error}", error=True)
            return
        with self._lock:
            for scope, heads in self._lists.items():
                self._lists[scope] = [
                    dataclasses.replace(each, name=name) if each.path == head.path else each
                    for each in heads
                ]
        self.picker.refresh()

    def delete_selected(self) -> None:
        """Ask whether to delete the selected session (never the current one)."""
        head = self._selected()
        if head is None:
            return
        if self._is_current(head):
            self.picker.say(CURRENT_NOT_DELETED, error=True)
            return
        self.picker.ask(PickerQuestion("Delete session?", lambda answer: self._delete(head)))

    def _delete(self, head: SessionHead) -> None:
        deletion = delete_session_file(head.path)
        if deletion.error is None:
            with self._lock:
                self._deleted.add(head.path)
                for scope, heads in self._lists.items():
                    self._lists[scope] = [each for each in heads if each.path != head.path]
            self.picker.refresh()
        self.picker.say(deletion.message, error=deletion.error is not None)
