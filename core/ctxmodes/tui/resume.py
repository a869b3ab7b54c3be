"""The ``/resume`` and ``-r`` picker: sessions listed from their heads (see
:mod:`ctxmodes.tui.heads`), filtered as you type by partial id, name or first message;
after a pause in typing, the files' full text is searched in the background and matches are
added as they are found."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ctxmodes.session.paths import cwd_filter, resolve_path
from ctxmodes.tui.heads import SessionHead, file_contains, list_heads
from ctxmodes.tui.picker import Picker, PickerItem

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


class ResumePicker:
    """:param wake: called (from the search thread) when content matches arrived."""

    def __init__(
        self,
        directory: Path,
        on_pick: Callable[[Path], None],
        *,
        cwd: str | None = None,
        wake: Callable[[], None] = lambda: None,
    ) -> None:
        heads = list_heads(directory)
        if cwd is not None:
            # A directory every project shares: this project's sessions, as Pi lists them.
            mine = resolve_path(cwd)
            heads = [head for head in heads if head.cwd and resolve_path(head.cwd) == mine]
        self.heads = heads
        short = distinct_prefixes([head.id for head in self.heads])
        self._rows = [head_row(head, short[head.id]) for head in self.heads]
        self.wake = wake
        self._lock = threading.Lock()
        self._content: dict[str, list[Path]] = {}
        self._searching: str | None = None
        self._thread: threading.Thread | None = None
        self.picker = Picker(
            "Resume a session",
            self.rows,
            lambda item: on_pick(item.key),
            hint="type: id, name or text · Enter resume · Esc cancel",
        )

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


def pick_session(directory: Path, cwd: Path) -> Path | None:
    """``ctxmodes chat -r``: the picker on its own, before any session starts, over ``cwd``'s
    sessions in ``directory``; ``None`` when cancelled or when there is nothing to resume."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    chosen: list[Path] = []
    resume = ResumePicker(directory, chosen.append, cwd=cwd_filter(cwd, directory))
    if not resume.heads:
        print(f"no sessions to resume in {directory}")
        return None
    picker = resume.picker
    keys = KeyBindings()
    app: Application[None] = Application(
        layout=Layout(Window(FormattedTextControl(picker.fragments), dont_extend_height=True)),
        key_bindings=keys,
        full_screen=False,
    )
    resume.wake = app.invalidate

    @keys.add("up")
    def _(event: KeyPressEvent) -> None:
        picker.move(-1)

    @keys.add("down")
    def _(event: KeyPressEvent) -> None:
        picker.move(1)

    @keys.add("enter")
    def _(event: KeyPressEvent) -> None:
        picker.pick()
        app.exit()

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    def _(event: KeyPressEvent) -> None:
        app.exit()

    @keys.add("backspace")
    def _(event: KeyPressEvent) -> None:
        picker.backspace()

    @keys.add("<any>")
    def _(event: KeyPressEvent) -> None:
        data = event.key_sequence[-1].data
        if data.isprintable():
            picker.type(data)

    app.run()
    return chosen[0] if chosen else None
