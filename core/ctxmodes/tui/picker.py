"""An inline list picker drawn in place of the editor (``/resume``, ``/tree``, choices):
arrows move, typing filters, Enter picks, Esc cancels. It never takes the whole screen."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ctxmodes.tui.text_wrap import wrap_words

#: (style, text) pairs.
Pairs = list[tuple[str, str]]

VISIBLE_ROWS: Final = 12


@dataclass(frozen=True, slots=True)
class PickerItem:
    key: Any
    #: What typing filters on (lower-cased by the picker).
    text: str
    fragments: Pairs


@dataclass
class Picker:
    """State of one pick. ``items(query)`` gives the rows for the current query (so a caller
    may match partial ids, search lazily ...); ``on_pick`` receives the chosen row, or, for
    a free-text picker (``free_text``), the typed text as the row's key."""

    title: str
    items: Callable[[str], Sequence[PickerItem]]
    on_pick: Callable[[PickerItem], None]
    on_cancel: Callable[[], None] = lambda: None
    hint: str = "↑↓ move · type to filter · Enter choose · Esc cancel"
    free_text: bool = False
    #: A free-text picker for a secret: what is typed is drawn as dots.
    secret: bool = False
    #: Ctrl+O: cycles the picker's filter (``/tree``), when given.
    on_cycle: Callable[[], None] | None = None
    #: Keys of the picker's own, by action: ``fold`` (Ctrl+←), ``unfold`` (Ctrl+→),
    #: ``label`` (Shift+L, which then does not filter).
    actions: dict[str, Callable[[], None]] = field(default_factory=dict)
    query: str = ""
    selected: int = 0
    _rows: Sequence[PickerItem] | None = field(default=None, repr=False)

    def rows(self) -> Sequence[PickerItem]:
        if self._rows is None:
            self._rows = self.items(self.query)
            self.selected = min(self.selected, max(0, len(self._rows) - 1))
        return self._rows

    def refresh(self) -> None:
        """Ask ``items`` again (the query changed, or results arrived)."""
        self._rows = None

    def type(self, text: str) -> None:
        self.query += text
        self.selected = 0
        self.refresh()

    def backspace(self) -> None:
        self.query = self.query[:-1]
        self.selected = 0
        self.refresh()

    def move(self, delta: int) -> None:
        count = len(self.rows())
        if count:
            self.selected = max(0, min(count - 1, self.selected + delta))

    def pick(self) -> None:
        if self.free_text:
            self.on_pick(PickerItem(self.query, self.query, []))
            return
        rows = self.rows()
        if rows:
            self.on_pick(rows[self.selected])

    def fragments(self, width: int = 0) -> StyleAndTextTuples:
        """What the picker draws; ``width``: the terminal's columns, to which the title is
        wrapped at spaces (it may be a long sentence, and the rows below are cut, not
        wrapped, to keep one row per line)."""
        rows = self.rows()
        title = wrap_words(self.title, width - 1) if width > 1 else self.title
        parts: StyleAndTextTuples = [("class:picker.title", title), ("", "\n")]
        shown = "•" * len(self.query) if self.secret else self.query
        parts.append(("class:picker.query", f"> {shown}"))
        if self.free_text:
            parts += [("", "\n"), ("class:picker.hint", self.hint)]
            return parts
        start = max(0, min(self.selected - VISIBLE_ROWS // 2, len(rows) - VISIBLE_ROWS))
        for index in range(start, min(len(rows), start + VISIBLE_ROWS)):
            style = "class:picker.selected" if index == self.selected else ""
            parts.append(("", "\n"))
            parts.append((style, "▸ " if index == self.selected else "  "))
            parts.extend((f"{style} {s}".strip(), t) for s, t in rows[index].fragments)
        if not rows:
            parts += [("", "\n"), ("class:picker.hint", "  (nothing matches)")]
        parts += [("", "\n"), ("class:picker.hint", f"{len(rows)} · {self.hint}")]
        return parts
