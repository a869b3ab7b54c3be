"""The ``/resume`` and ``-r`` picker: sessions listed from their heads (see
:mod:`ctxmodes.tui.heads`), filtered as you type by partial id, name or first message;
after a pause in typing, the files' full text is searched in the background and matches are
added as they are found.

As in Pi's picker, the selected session is renamed (``app.session.rename``, Ctrl+R: a line
prefilled with its name) or deleted (``app.session.delete``, Ctrl+D, after a confirmation;
``app.session.deleteNoninvasive`` while nothing is typed), the current session never."""

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
from ctxmodes.tui.keymap import KeyMap, key_label
from ctxmodes.tui.picker import Picker, PickerItem, PickerQuestion
from ctxmodes.tui.session_files import delete_session_file, name_session_file

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


def head_row(head: SessionHead, short_id: str | None = None) -> PickerItem:
    text = f"{head.id} {head.name or ''} {head.first_message} {head.cwd}".lower()
    fragments = [
        ("class:picker.hint", f"{head.when()}  "),
        ("", head.title[:70]),
        ("class:picker.hint", f"  {short_id or head.id[:SHORT_ID_CHARS]}  {head.size // 1024} KiB"),
    ]
    return PickerItem(head.path, text, fragments)


#: Pi's refusal, word for word.
CURRENT_NOT_DELETED: Final = "Cannot delete the currently active session"
#: Pi's picker keeps asking without a word when the name is empty; this says why.
EMPTY_NAME: Final = "A session name cannot be empty"


def _hint(keymap: KeyMap) -> str:
    """The picker's keys, as the keymap binds them."""
    parts = ["type: id, name or text", "Enter resume"]
    for action, what in (("app.session.rename", "rename"), ("app.session.delete", "delete")):
        bound = keymap.of(action)
        if bound:
            parts.append(f"{key_label(bound[0])} {what}")
    return " · ".join([*parts, "Esc cancel"])


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
        self._rename_current = rename_current
        self.wake = wake
        self._lock = threading.Lock()
        self._content: dict[str, list[Path]] = {}
        self._searching: str | None = None
        self._thread: threading.Thread | None = None
        self._show(heads)
        self.picker = Picker(
            "Resume a session",
            self.rows,
            lambda item: on_pick(item.key),
            hint=_hint(keymap if keymap is not None else KeyMap.load(None)),
            actions={
                "app.session.rename": self.rename_selected,
                "app.session.delete": self.delete_selected,
                "app.session.deleteNoninvasive": self.delete_unless_typing,
            },
        )

    def _show(self, heads: list[SessionHead]) -> None:
        """List ``heads`` (a new list, so that the search thread may go on over the old)."""
        self.heads = heads
        short = distinct_prefixes([head.id for head in heads])
        self._rows = [head_row(head, short[head.id]) for head in heads]

    def rows(self, query: str) -> list[PickerItem]:
        needle = query.strip().lower()
        if not needle:
            return self._rows
        shown = [row for row in self._rows if needle in row.text]
        with self._lock:
            found = self._content.get(needle)
        if found is None:
            if len(needle) >= SEARCH_MIN_CHARS:
                self._start_search(needle)
            return shown
        seen = {row.key for row in shown}
        extra = [row for row in self._rows if row.key in set(found) and row.key not in seen]
        return shown + extra

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
