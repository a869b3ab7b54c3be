"""The ``/resume`` and ``-r`` picker: sessions listed from their heads (see
:mod:`ctxmodes.tui.heads`), filtered as you type by partial id, name or first message;
after a pause in typing, the files' full text is searched in the background and matches are
added as they are found.

As in Pi's picker, the selected session is renamed (``app.session.rename``, Ctrl+R: a line
prefilled with its name) or deleted (``app.session.delete``, Ctrl+D, after a confirmation;
``app.session.deleteNoninvasive`` while nothing is typed), the current session never; Ctrl+N
(``app.session.toggleNamedFilter``) lists named sessions only, Ctrl+P
(``app.session.togglePath``) shows each session's file, and Ctrl+S
(``app.session.toggleSort``) cycles Pi's orders (see :mod:`ctxmodes.tui.session_order`)."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.session.paths import resolve_path
from ctxmodes.tui.heads import SessionHead, file_contains, list_heads
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.picker import Picker, PickerItem, PickerQuestion
from ctxmodes.tui.session_files import delete_session_file, name_session_file
from ctxmodes.tui.session_order import (
    SORT_LABELS,
    SORT_MODES,
    SortMode,
    by_relevance,
    threaded,
)

#: Queries shorter than this do not start a full-text search.
SEARCH_MIN_CHARS: Final = 3


#: The fewest characters of a session id the picker shows.
SHORT_ID_CHARS: Final = 8


def distinct_prefixes(ids: list[str], minimum: int = SHORT_ID_CHARS) -> dict[str, str]:
    """Each id's shortest beginning (at least ``minimum`` characters) that no other id of
    ``ids`` shares: session ids made in the same minute share their first characters, so
    the part shown must go on to where they differ (and is what ``--session`` takes)."""
    ordered = sorted(set(ids))
    shown: dict[str, str] = {}
    for position, session_id in enumerate(ordered):
        length = minimum
        for neighbour in ordered[max(0, position - 1) : position + 2]:
            if neighbour == session_id:
                continue
            common = next(
                (i for i, (a, b) in enumerate(zip(session_id, neighbour, strict=False)) if a != b),
                min(len(session_id), len(neighbour)),
            )
            length = max(length, common + 1)
        shown[session_id] = session_id[:length]
    return shown


def search_text(head: SessionHead) -> str:
    """What typing matches in a session's row, lower-cased."""
    return f"{head.id} {head.name or ''} {head.first_message} {head.cwd}".lower()


def head_row(
    head: SessionHead, short_id: str | None = None, *, tree: str = "", path_shown: bool = False
) -> PickerItem:
    """One session's row; ``tree``: the threaded list's drawing before it; ``path_shown``:
    its file is named, shortened to ``~`` under the home directory, as Pi's Ctrl+P does."""
    where = f"  {shorten_home(str(head.path))}" if path_shown else ""
    fragments = [
        ("class:picker.hint", f"{head.when()}  {tree}"),
        ("", head.title[:70]),
        (
            "class:picker.hint",
            f"  {short_id or head.id[:SHORT_ID_CHARS]}  {head.size // 1024} KiB{where}",
        ),
    ]
    return PickerItem(head.path, search_text(head), fragments)


def shorten_home(path: str) -> str:
    """Pi's ``shortenPath``: the home directory written ``~``."""
    home = os.path.expanduser("~")
    if home not in ("", "~") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


#: Pi's refusal, word for word.
CURRENT_NOT_DELETED: Final = "Cannot delete the currently active session"
#: Pi's picker keeps asking without a word when the name is empty; this says why.
EMPTY_NAME: Final = "A session name cannot be empty"


def _hint(keymap: KeyMap, path_shown: bool) -> str:
    """The picker's keys, as the keymap binds them, named and ordered as Pi's hint names
    them; an action without a key is left out."""
    parts = ["type: id, name or text", "Enter resume"]
    for action, what in (
        ("app.session.toggleSort", "sort"),
        ("app.session.toggleNamedFilter", "named"),
        ("app.session.delete", "delete"),
        ("app.session.togglePath", f"path {'(on)' if path_shown else '(off)'}"),
        ("app.session.rename", "rename"),
    ):
        if keymap.text(action):
            parts.append(f"{keymap.text(action)} {what}")
    return " · ".join([*parts, "Esc cancel"])


#: The picker's title, then Pi's header words for the name filter and the order.
TITLE: Final = "Resume a session"


class ResumePicker:
    """:param wake: called (from the search thread) when content matches arrived.
    :param current: the session being run, which is not deleted, and is renamed through
        ``rename_current`` (the live session, whose writer holds its file).
    :param keymap: the keys of renaming and deleting (Pi's defaults when not given)."""

    def __init__(
        self,
        directory: Path,
        on_pick: Callable[[Path], None],
        *,
        cwd: str | None = None,
        wake: Callable[[], None] = lambda: None,
        current: Path | None = None,
        rename_current: Callable[[str], None] | None = None,
        keymap: KeyMap | None = None,
    ) -> None:
        heads = list_heads(directory)
        if cwd is not None:
            # A directory every project shares: this project's sessions, as Pi lists them.
            mine = resolve_path(cwd)
            heads = [head for head in heads if head.cwd and resolve_path(head.cwd) == mine]
        self._current = os.path.realpath(current) if current is not None else None
        self._keymap = keymap if keymap is not None else KeyMap.load(None)
        self.sort: SortMode = "threaded"
        self.named_only = False
        self.path_shown = False
        self._rename_current = rename_current
        self.wake = wake
        self._lock = threading.Lock()
        self._content: dict[str, list[Path]] = {}
        self._searching: str | None = None
        self._thread: threading.Thread | None = None
        self._show(heads)
        self.picker = Picker(
            TITLE,
            self.rows,
            lambda item: on_pick(item.key),
            actions={
                "app.session.rename": self.rename_selected,
                "app.session.delete": self.delete_selected,
                "app.session.deleteNoninvasive": self.delete_unless_typing,
                "app.session.toggleSort": self.toggle_sort,
                "app.session.toggleNamedFilter": self.toggle_named,
                "app.session.togglePath": self.toggle_path,
            },
        )
        self._describe()

    def _show(self, heads: list[SessionHead]) -> None:
        """List ``heads`` (a new list, so that the search thread may go on over the old)."""
        self.heads = heads
        self._short = distinct_prefixes([head.id for head in heads])

    def _row(self, head: SessionHead, tree: str = "") -> PickerItem:
        return head_row(head, self._short.get(head.id), tree=tree, path_shown=self.path_shown)

    def rows(self, query: str) -> list[PickerItem]:
        heads = self.heads
        if self.named_only:
            heads = [head for head in heads if head.name and head.name.strip()]
        needle = query.strip().lower()
        if not needle:
            if self.sort == "threaded":
                return [self._row(head, tree) for head, tree in threaded(heads)]
            return [self._row(head) for head in heads]
        shown = [head for head in heads if needle in search_text(head)]
        with self._lock:
            found = self._content.get(needle)
        if found is None:
            if len(needle) >= SEARCH_MIN_CHARS:
                self._start_search(needle)
        else:
            seen = {head.path for head in shown}
            shown += [head for head in heads if head.path in set(found) and head.path not in seen]
        if self.sort != "recent":  # Pi sorts what matches by relevance unless by recency
            shown = by_relevance(shown, needle, search_text)
        return [self._row(head) for head in shown]

    # ------------------------------------------------------------ Pi's toggles

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

    def _describe(self) -> None:
        """The title, hint and empty line for the toggles in force; the rows again."""
        picker = self.picker
        name = "Named" if self.named_only else "All"
        picker.title = f"{TITLE}  Name: {name}  Sort: {SORT_LABELS[self.sort]}"
        picker.hint = _hint(self._keymap, self.path_shown)
        picker.empty = "  (nothing matches)"
        if self.named_only:
            # Pi's words, less its Tab to every folder's sessions, which this picker lacks.
            toggle = self._keymap.text("app.session.toggleNamedFilter")
            picker.empty = f"  No named sessions in current folder. Press {toggle} to show all."
        picker.refresh()

    def _start_search(self, needle: str) -> None:
        with self._lock:
            if self._searching == needle:
                return
            self._searching = needle
            self._thread = threading.Thread(
                target=self._search, args=(needle,), name="ctxmodes-resume-search", daemon=True
            )
            self._thread.start()

    def _search(self, needle: str) -> None:
        matches: list[Path] = []
        for head in self.heads:
            with self._lock:
                if self._searching != needle:
                    return  # a newer query replaced this one
            if file_contains(head.path, needle):
                matches.append(head.path)
        with self._lock:
            self._content[needle] = matches
            self._searching = None
        self.picker.refresh()
        self.wake()

    def join_search(self, timeout: float | None = None) -> None:
        """Wait for the search started last, if any."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    # ------------------------------------------------------------ renaming and deleting

    def _selected(self) -> SessionHead | None:
        rows = self.picker.rows()
        if not rows:
            return None
        chosen = rows[self.picker.selected].key
        return next((head for head in self.heads if head.path == chosen), None)

    def _is_current(self, head: SessionHead) -> bool:
        return self._current is not None and os.path.realpath(head.path) == self._current

    def rename_selected(self) -> None:
        """Ask for the selected session's new name, its name so far typed in."""
        head = self._selected()
        if head is not None:
            self._ask_name(head, head.name or "")

    def _ask_name(self, head: SessionHead, typed: str) -> None:
        self.picker.ask(
            PickerQuestion(
                "Rename session",
                lambda answer: self._rename(head, answer),
                answer=typed,
                hint="Enter save · Esc cancel",
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
        renamed = dataclasses.replace(head, name=name)
        self._show([renamed if each.path == head.path else each for each in self.heads])
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

    def delete_unless_typing(self) -> None:
        """Pi's delete that stays out of the way: with a query typed, the key edits the
        query as Backspace does (Pi's Ctrl+Backspace, which is Backspace to most terminals)."""
        if self.picker.query:
            self.picker.backspace()
        else:
            self.delete_selected()

    def _delete(self, head: SessionHead) -> None:
        deletion = delete_session_file(head.path)
        if deletion.error is None:
            self._show([each for each in self.heads if each.path != head.path])
            self.picker.refresh()
        self.picker.say(deletion.message, error=deletion.error is not None)
