"""Internal to ctxmodes: the editor's moves and deletes as Pi's editor has them, on the keys
``keybindings.json`` gives Pi's ``tui.editor.*`` actions.

The draft is a prompt_toolkit buffer, which types, undoes and completes; these keys act on
it as Pi's multi-line ``Editor`` acts (:class:`~ctxmodes.tui.text_field.TextField`): a
character is a grapheme, a word stops at ASCII punctuation inside it, Home, End and the line
deletes act on the cursor's line, and what the deletes take goes to Pi's kill ring, whose
entries join while deletes follow one another and which Ctrl+Y and Alt+Y yank from. Typing
or another key between two of them ends a run of deletes, as any other action ends it in Pi.
↑, ↓, PageUp and PageDown move between the rows the editor draws
(:mod:`ctxmodes.tui.editor_rows`), and ↑ and ↓ go on through the prompts sent before, as
Pi's editor browses its history.

Undo is the buffer's, its steps Pi's: what is typed from one space to the next is one step
(a space starts a new one), and each delete, yank, paste or line break is one. A large
paste's marker is one character to the moves and the deletes, as in Pi's editor.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from prompt_toolkit.document import Document
from prompt_toolkit.filters import has_completions

from ctxmodes.tui.line_field import graphemes, is_paste_marker
from ctxmodes.tui.paste_markers import PasteMarkers
from ctxmodes.tui.text_field import LineRows, TextField

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.filters import Filter
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    from ctxmodes.tui.keymap import KeyMap, KeySequence

#: The actions, in the order Pi's editor checks a key against them: where one key is bound
#: to two, the first runs.
EDITOR_EDITS: Final = (
    "tui.editor.deleteToLineEnd",
    "tui.editor.deleteToLineStart",
    "tui.editor.deleteWordBackward",
    "tui.editor.deleteWordForward",
    "tui.editor.deleteCharBackward",
    "tui.editor.deleteCharForward",
    "tui.editor.yank",
    "tui.editor.yankPop",
    "tui.editor.historyPrevious",
    "tui.editor.historyNext",
    "tui.editor.cursorLineStart",
    "tui.editor.cursorLineEnd",
    "tui.editor.cursorWordLeft",
    "tui.editor.cursorWordRight",
    "tui.editor.cursorUp",
    "tui.editor.cursorDown",
    "tui.editor.cursorRight",
    "tui.editor.cursorLeft",
    "tui.editor.pageUp",
    "tui.editor.pageDown",
)


#: How many prompts sent before ↑ goes back through, as in Pi's editor.
SENT_KEPT: Final = 100

#: The deletes after which the completions are looked for again.
_REFILTERS: Final = frozenset({"tui.editor.deleteCharBackward", "tui.editor.deleteCharForward"})


class EditorEdits:
    """Pi's editing actions and typing on ``buffer``, with the kill ring they share; the
    buffer keeps the undo history, its steps made where Pi's editor makes them."""

    def __init__(
        self,
        buffer: Buffer,
        pastes: PasteMarkers,
        *,
        line_rows: LineRows,
        page_rows: Callable[[], int],
    ) -> None:
        """``line_rows``: the draft's lines as the editor last wrapped them, and the width
        it wrapped them to; ``page_rows``: the rows it shows."""
        self._buffer = buffer
        self._pastes = pastes
        self._page_rows = page_rows
        self._field = TextField(undo_point=buffer.save_to_undo_stack, paste_numbers=pastes.numbers)
        self._field.line_rows = self._line_rows = line_rows
        #: The text and cursor the field last left: anything else since then (a key of
        #: prompt_toolkit's, a paste) ended a run of typing, of deletes or a yank.
        self._left: tuple[str, int] | None = ("", 0)
        self._editing = False
        #: The prompt sent before that ↑ and ↓ show (0 the last one; -1: none, the draft),
        #: and the draft they put aside to show it.
        self._shown = -1
        self._draft: tuple[str, int] | None = None
        buffer.on_text_changed += self._changed

    def _changed(self, buffer: Buffer) -> None:
        # A change the field did not make (an undo, a paste, a new line) ends a run even
        # where it comes back to the text and cursor the field left, and what it changes
        # is a draft of its own, no longer a prompt sent before.
        if not self._editing:
            self._left = None
            self._stop_browsing()

    @contextmanager
    def _own_change(self) -> Iterator[None]:
        """The buffer changed by the field's own edit, which ends no run."""
        self._editing = True
        try:
            yield
        finally:
            self._editing = False

    def paste(self, text: str) -> None:
        """A bracketed paste, one undo step: cleaned as Pi's editor cleans it, and a large
        one kept as its marker (:class:`~ctxmodes.tui.paste_markers.PasteMarkers`)."""
        self._stop_browsing()
        buffer = self._buffer
        buffer.save_to_undo_stack()
        buffer.insert_text(self._pastes.take(text, buffer.document.text_before_cursor))

    def type(self, text: str) -> None:
        """Typed ``text``: one undo step with what was typed just before it, unless it is
        whitespace, which starts a step of its own (Pi's grouping of typing)."""
        self._stop_browsing()
        self._synced().insert(text)
        with self._own_change():
            self._buffer.insert_text(text)  # as typing does: the completions follow it
        self._left = (self._buffer.text, self._buffer.cursor_position)

    def run(self, action: str) -> None:
        moves = _MOVES.get(action)
        if moves is not None:
            moves(self)
            return
        if action.startswith("tui.editor.delete"):
            self._stop_browsing()
        buffer = self._buffer
        before = (buffer.text, buffer.cursor_position)
        field = self._synced()
        marker = None
        if action == "tui.editor.deleteCharBackward":
            line = buffer.document.current_line_before_cursor
            taken = graphemes(line, self._pastes.numbers())[-1:]
            marker = taken[0] if taken and is_paste_marker(taken[0]) else None
        field.edit(action)
        if marker is not None:
            # Backspace took a marker whole: its paste is forgotten, the later ones
            # numbered down, in the text too, as Pi's editor does.
            gone = self._pastes.forget(marker)
            head = self._pastes.renumbered(field.value[: field.cursor], gone)
            field.take(head + self._pastes.renumbered(field.value[field.cursor :], gone), len(head))
        if field.value != before[0]:
            self._stop_browsing()  # a yank, as Pi's editor ends it
        if (field.value, field.cursor) != before:
            with self._own_change():
                buffer.document = Document(field.value, field.cursor)
            if action in _REFILTERS and buffer.complete_while_typing():
                # As typing does, and as Pi's editor does after these: the completions of
                # what is left (a command's name, a path), or none.
                buffer.start_completion(select_first=False)
        self._left = (field.value, field.cursor)

    def cursor_up(self) -> None:
        """↑ as Pi's editor takes it: to the row above; on the first row to the text's
        start, and from there (or from an empty draft, or a prompt shown) to the prompt
        sent before."""
        field = self._synced()
        if field.on_first_row() and (not field.value or self._shown >= 0 or field.cursor == 0):
            self.browse(-1)
        else:
            self._moved(field.cursor_up)

    def cursor_down(self) -> None:
        """↓ as Pi's editor takes it: to the row below; on the last row to the end of its
        line, or, while a prompt sent before shows, to the one sent after it (after the
        last, the draft put aside)."""
        field = self._synced()
        if self._shown >= 0 and field.on_last_row():
            self.browse(1)
        else:
            self._moved(field.cursor_down)

    def page(self, direction: int) -> None:
        """PageUp (``direction`` -1) or PageDown (1): as many rows as the editor shows, as
        Pi's editor pages."""
        field = self._synced()
        self._moved(lambda: field.cursor_page(direction, self._page_rows()))

    def browse(self, direction: int) -> None:
        """Pi's ``navigateHistory``: the prompt sent before the one shown (``direction``
        -1, the cursor at its start) or after it (1, at its end); past the last one, the
        draft put aside when the first was shown, as it was. Showing the first is one
        undo step."""
        entries = self._sent()
        shown = self._shown - direction
        if not entries or not -1 <= shown < len(entries):
            return
        buffer = self._buffer
        if self._shown == -1:
            buffer.save_to_undo_stack()
            self._draft = (buffer.text, buffer.cursor_position)
        if shown == -1:
            text, cursor = self._draft or ("", 0)
            self._draft = None
        else:
            text = entries[shown]
            cursor = 0 if direction < 0 else len(text)
        with self._own_change():
            buffer.document = Document(text, cursor)
        self._shown = shown
        self._field.take(text, cursor)
        self._left = (text, cursor)

    def _sent(self) -> list[str]:
        """The prompts ↑ goes back through, the last one first, as Pi's editor keeps them:
        each trimmed, none empty, none the same as the one after it, at most
        :data:`SENT_KEPT`."""
        entries: list[str] = []
        for text in reversed(self._buffer.history.get_strings()):
            trimmed = text.strip()
            if trimmed and (not entries or entries[-1] != trimmed):
                entries.append(trimmed)
            if len(entries) == SENT_KEPT:
                break
        return entries

    def _stop_browsing(self) -> None:
        self._shown = -1
        self._draft = None

    def _moved(self, move: Callable[[], None]) -> None:
        """The cursor moved by the field, the column it keeps kept for the next move."""
        move()
        field = self._field
        self._buffer.cursor_position = field.cursor
        self._left = (field.value, field.cursor)

    def _synced(self) -> TextField:
        buffer, field = self._buffer, self._field
        now = (buffer.text, buffer.cursor_position)
        if now != self._left:
            field.take(*now)
        field.wrap_width = self._line_rows.width
        return field


#: The actions that move through the rows or the prompts sent before, not by the field.
_MOVES: Final[Mapping[str, Callable[[EditorEdits], None]]] = {
    "tui.editor.cursorUp": EditorEdits.cursor_up,
    "tui.editor.cursorDown": EditorEdits.cursor_down,
    "tui.editor.historyPrevious": lambda edits: edits.browse(-1),
    "tui.editor.historyNext": lambda edits: edits.browse(1),
    "tui.editor.pageUp": lambda edits: edits.page(-1),
    "tui.editor.pageDown": lambda edits: edits.page(1),
}
_ROW_MOVES: Final = frozenset({"tui.editor.cursorUp", "tui.editor.cursorDown"})


def bind_editor_edits(
    keys: KeyBindings,
    keymap: KeyMap,
    edits: EditorEdits,
    active: Filter,
    taken: Collection[KeySequence] = (),
) -> None:
    """Bind the keys of :data:`EDITOR_EDITS` as ``keymap`` has them, while ``active`` holds;
    a key in ``taken`` (an action of the terminal's own has it) is left to that action."""
    first: dict[KeySequence, str] = {}
    for action in EDITOR_EDITS:
        for sequence in keymap.of(action):
            if sequence not in taken:
                first.setdefault(sequence, action)
    for sequence, action in first.items():
        # ↑ and ↓ move through the completion menu while it shows, as in Pi's editor.
        when = active & ~has_completions if action in _ROW_MOVES else active
        # The edit makes its own undo step, where Pi's makes one.
        keys.add(*sequence, filter=when, save_before=_no_save)(_runner(edits, action))


def _no_save(event: KeyPressEvent) -> bool:
    return False


def _runner(edits: EditorEdits, action: str) -> Callable[[KeyPressEvent], None]:
    def run(event: KeyPressEvent) -> None:
        edits.run(action)

    return run
