"""Internal to ctxmodes: a text of several lines edited as Pi's multi-line ``Editor``
(pi-tui's ``components/editor.js``) edits it, for the instructions of a branch summary.

It is Pi's one-line field (:class:`~ctxmodes.tui.line_field.LineField`) with the editor's
rules where lines meet: Home, End and the line deletes act on the cursor's line (a line
delete at the line's edge takes the line break); a word move or delete stops at a line's
edge and then crosses the break alone; ↑ and ↓ move between lines, keeping the column they
started from while they pass shorter lines, as Pi's editor keeps it. ↑ and ↓ go from line
to line however many rows a long line is drawn over (Pi's editor moves by the rows of its
word wrap), so each line is one of Pi's visual lines. Columns of that kept place are counted
as Pi counts them, in UTF-16 units.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from ctxmodes.tui.line_field import EDITS, LineField, word_backward, word_forward


def _units(text: str) -> int:
    """``text``'s length in UTF-16 units, as JavaScript counts a string."""
    return len(text) + sum(1 for char in text if ord(char) >= 0x10000)


def _index_at_units(text: str, units: int) -> int:
    """The string index in ``text`` at ``units`` UTF-16 units (a grapheme boundary)."""
    counted = 0
    for index, char in enumerate(text):
        if counted >= units:
            return index
        counted += 2 if ord(char) >= 0x10000 else 1
    return len(text)


class TextField(LineField):
    """Several lines being edited, as one text with line feeds and one cursor."""

    #: The column a vertical move keeps while it passes shorter lines (Pi's
    #: ``preferredVisualCol``), and where the cursor stood before a vertical move put it at
    #: the start of a grapheme (``snappedFromCursorCol``), in UTF-16 units.
    _preferred: int | None = None
    _snapped_from: int | None = None

    # Where the cursor's line is.

    def _line_start(self) -> int:
        return self.value.rfind("\n", 0, self.cursor) + 1

    def _line_end(self) -> int:
        end = self.value.find("\n", self.cursor)
        return len(self.value) if end < 0 else end

    def take(self, value: str, cursor: int) -> None:
        super().take(value, cursor)
        self._preferred = self._snapped_from = None

    def _set_cursor(self, cursor: int) -> None:
        """Pi's ``setCursorCol``: the cursor placed, the kept column forgotten."""
        self.cursor = cursor
        self._preferred = self._snapped_from = None

    # The keys that act on the line, or cross its edge.

    def insert(self, text: str) -> None:
        super().insert(text)
        self._set_cursor(self.cursor)

    def paste(self, text: str, *, lines: bool = False) -> None:
        super().paste(text, lines=lines)
        self._set_cursor(self.cursor)

    def new_line(self) -> None:
        """Pi's ``addNewLine``: the line broken at the cursor, one step to undo."""
        self._last = None
        self._push_undo()
        self._put("\n")
        self._set_cursor(self.cursor)

    def delete_char_backward(self) -> None:
        moves = self.cursor > 0
        super().delete_char_backward()
        if moves:
            self._set_cursor(self.cursor)

    def delete_word_backward(self) -> None:
        start = self._line_start()
        if self.cursor == start:
            if start > 0:  # the line break alone, as a kill
                self._kill_break(before=True)
            return
        joins = self._last == "kill"
        self._push_undo()
        found = start + word_backward(
            self.value[start : self.cursor], self.cursor - start, self._paste_numbers()
        )
        self.kill_ring.push(self.value[found : self.cursor], prepend=True, accumulate=joins)
        self._last = "kill"
        self.value = self.value[:found] + self.value[self.cursor :]
        self._set_cursor(found)

    def delete_word_forward(self) -> None:
        start, end = self._line_start(), self._line_end()
        if self.cursor >= end:
            if end < len(self.value):
                self._kill_break(before=False)
            return
        joins = self._last == "kill"
        self._push_undo()
        found = start + word_forward(
            self.value[start:end], self.cursor - start, self._paste_numbers()
        )
        self.kill_ring.push(self.value[self.cursor : found], prepend=False, accumulate=joins)
        self._last = "kill"
        self.value = self.value[: self.cursor] + self.value[found:]
        self._set_cursor(self.cursor)

    def delete_to_line_start(self) -> None:
        start = self._line_start()
        if self.cursor == start:
            if start > 0:
                self._kill_break(before=True)
            return
        self._push_undo()
        killed = self.value[start : self.cursor]
        self.kill_ring.push(killed, prepend=True, accumulate=self._last == "kill")
        self._last = "kill"
        self.value = self.value[:start] + self.value[self.cursor :]
        self._set_cursor(start)

    def delete_to_line_end(self) -> None:
        end = self._line_end()
        if self.cursor == end:
            if end < len(self.value):
                self._kill_break(before=False)
            return
        self._push_undo()
        killed = self.value[self.cursor : end]
        self.kill_ring.push(killed, prepend=False, accumulate=self._last == "kill")
        self._last = "kill"
        self.value = self.value[: self.cursor] + self.value[end:]

    def _kill_break(self, *, before: bool) -> None:
        """The line break before or after the cursor deleted into the kill ring."""
        self._push_undo()
        self.kill_ring.push("\n", prepend=before, accumulate=self._last == "kill")
        self._last = "kill"
        at = self.cursor - 1 if before else self.cursor
        self.value = self.value[:at] + self.value[at + 1 :]
        if before:
            self._set_cursor(at)

    def yank(self) -> None:
        super().yank()
        if self._last == "yank":
            self._set_cursor(self.cursor)

    def yank_pop(self) -> None:
        popped = self._last == "yank" and len(self.kill_ring.entries) > 1
        super().yank_pop()
        if popped:
            self._set_cursor(self.cursor)

    def undo(self) -> None:
        super().undo()
        self._preferred = None  # the snapped place stays, as in Pi

    # Moving.

    def cursor_left(self) -> None:
        moves = self.cursor > 0
        super().cursor_left()
        if moves:
            self._set_cursor(self.cursor)

    def cursor_right(self) -> None:
        if self.cursor < len(self.value):
            super().cursor_right()
            self._set_cursor(self.cursor)
            return
        # At the end of the last line: nothing moves, but a move up keeps this column.
        self._last = None
        self._preferred = _units(self.value[self._line_start() : self.cursor])

    def cursor_line_start(self) -> None:
        self._last = None
        self._set_cursor(self._line_start())

    def cursor_line_end(self) -> None:
        self._last = None
        self._set_cursor(self._line_end())

    def cursor_word_left(self) -> None:
        self._last = None
        start = self._line_start()
        if self.cursor == start:
            if start > 0:
                self._set_cursor(start - 1)
            return
        column = self.cursor - start
        self._set_cursor(
            start + word_backward(self.value[start : self.cursor], column, self._paste_numbers())
        )

    def cursor_word_right(self) -> None:
        self._last = None
        start, end = self._line_start(), self._line_end()
        if self.cursor >= end:
            if end < len(self.value):
                self._set_cursor(end + 1)
            return
        self._set_cursor(
            start + word_forward(self.value[start:end], self.cursor - start, self._paste_numbers())
        )

    def cursor_up(self) -> None:
        """↑: to the line above; on the first line to its start (already there: nothing,
        as Pi's editor then looks for a history this text has none of)."""
        self._last = None
        start = self._line_start()
        if start == 0:
            if self.value and self.cursor != 0:
                self._set_cursor(0)
            return
        self._move_to_line(self.value.rfind("\n", 0, start - 1) + 1)

    def cursor_down(self) -> None:
        """↓: to the line below; on the last line to its end."""
        self._last = None
        end = self._line_end()
        if end == len(self.value):
            self._set_cursor(end)
            return
        self._move_to_line(end + 1)

    def _move_to_line(self, target_start: int) -> None:
        """Pi's ``moveToVisualLine``: the column kept or clamped by its sticky-column rules,
        then moved back to the start of a grapheme it would split."""
        start = self._line_start()
        if self._snapped_from is not None:
            column = self._snapped_from
        else:
            column = _units(self.value[start : self.cursor])
        source_end = _units(self.value[start : self._line_end()])
        target_end_index = self.value.find("\n", target_start)
        if target_end_index < 0:
            target_end_index = len(self.value)
        target = self.value[target_start:target_end_index]
        moved_to = min(self._vertical_column(column, source_end, _units(target)), _units(target))
        offset = 0
        for grapheme in self._graphemes(target):
            size = _units(grapheme)
            if offset > moved_to:
                break
            if size > 1 and moved_to < offset + size:
                self._snapped_from = moved_to
                self.cursor = target_start + _index_at_units(target, offset)
                return
            offset += size
        self.cursor = target_start + _index_at_units(target, moved_to)
        self._snapped_from = None

    def _vertical_column(self, current: int, source_end: int, target_end: int) -> int:
        """Pi's ``computeVerticalMoveColumn``: the column to move to, keeping or forgetting
        the preferred one."""
        if self._preferred is None or current < source_end:
            if target_end < current:
                self._preferred = current
                return target_end
            self._preferred = None
            return current
        if target_end < current or target_end < self._preferred:
            return target_end
        preferred, self._preferred = self._preferred, None
        return preferred

    def edit(self, action: str) -> bool:
        method = TEXT_EDITS.get(action)
        if method is None:
            return False
        method(self)
        return True


#: Pi's editor actions that its multi-line ``Editor`` takes here, with what each does:
#: the one-line field's, and the moves between lines.
TEXT_EDITS: Final[Mapping[str, Callable[[TextField], None]]] = {
    **{action: getattr(TextField, method.__name__) for action, method in EDITS.items()},
    "tui.editor.cursorUp": TextField.cursor_up,
    "tui.editor.cursorDown": TextField.cursor_down,
}
