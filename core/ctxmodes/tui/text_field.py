"""Internal to ctxmodes: a text of several lines edited as Pi's multi-line ``Editor``
(pi-tui's ``components/editor.js``) edits it, for the instructions of a branch summary and,
under the terminal's editor (:mod:`ctxmodes.tui.editor_edits`), for the draft.

It is Pi's one-line field (:class:`~ctxmodes.tui.line_field.LineField`) with the editor's
rules where lines meet: Home, End and the line deletes act on the cursor's line (a line
delete at the line's edge takes the line break); a word move or delete stops at a line's
edge and then crosses the break alone. A line wider than the field is wrapped into rows as
Pi's editor wraps it (after the spaces before a word, or between CJK characters), and ↑ and
↓ (and a page at a time) move between those rows, keeping the column they started from
while they pass shorter ones, as Pi's editor keeps it. Columns are counted as Pi counts
them, in UTF-16 units.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ctxmodes.session.jsvalues import js_length
from ctxmodes.tui.grapheme_cells import cjk_break
from ctxmodes.tui.line_field import (
    EDITS,
    LineField,
    graphemes,
    has_whitespace,
    is_paste_marker,
    visible_width,
    word_backward,
    word_forward,
)


def _index_at_units(text: str, units: int) -> int:
    """The string index in ``text`` at ``units`` UTF-16 units (a grapheme boundary)."""
    counted = 0
    for index, char in enumerate(text):
        if counted >= units:
            return index
        counted += 2 if ord(char) >= 0x10000 else 1
    return len(text)


@dataclass(frozen=True)
class Row:
    """One row a line is drawn on: where its line starts, and where the row starts and
    ends (string indices into the text)."""

    line_start: int
    start: int
    end: int


def word_wrap(line: str, width: int, pieces: Sequence[str]) -> list[tuple[int, int]]:
    """Where the rows of ``line`` (its graphemes ``pieces``, a paste's marker one of them)
    start and end when it is wrapped to ``width`` cells as Pi's editor wraps it
    (``wordWrapLine``): after the spaces before a word, or between CJK characters, else
    where the row is full; the spaces stay at the end of their row."""
    if not line or width <= 0:
        return [(0, 0)]
    if visible_width(line) <= width:
        return [(0, len(line))]
    if len(pieces) == 1 and not is_paste_marker(pieces[0]):  # one grapheme: not to be cut
        return [(0, len(line))]
    rows: list[tuple[int, int]] = []
    used = 0
    row_start = 0
    wrap_at = -1
    wrap_used = 0
    places = _places(line, pieces)
    for index, piece in enumerate(pieces):
        place = places[index]
        size = visible_width(piece)
        blank = not is_paste_marker(piece) and has_whitespace(piece)
        if used + size > width:
            if wrap_at >= 0 and used - wrap_used + size <= width:
                rows.append((row_start, wrap_at))
                row_start = wrap_at
                used -= wrap_used
            elif row_start < place:
                rows.append((row_start, place))
                row_start = place
                used = 0
            wrap_at = -1
        if size > width:
            # One piece wider than a row (a marker in a narrow field): cut into rows, for
            # the eye only.
            parts = word_wrap(piece, width, graphemes(piece))
            rows.extend((place + begin, place + end) for begin, end in parts[:-1])
            row_start = place + parts[-1][0]
            used = visible_width(piece[parts[-1][0] :])
            wrap_at = -1
            continue
        used += size
        following = pieces[index + 1] if index + 1 < len(pieces) else None
        if following is not None:
            spaced = has_whitespace(following)  # as a marker is, with its spaces
            after_space = blank and (is_paste_marker(following) or not spaced)
            at_cjk = not blank and not spaced and (_is_cjk(piece) or _is_cjk(following))
            if after_space or at_cjk:
                wrap_at, wrap_used = places[index + 1], used
    rows.append((row_start, len(line)))
    return rows


def _places(line: str, pieces: Sequence[str]) -> list[int]:
    """Where each of ``pieces`` starts in ``line``. The marks that join a marker's last
    character are no piece of their own (nor of the marker): they are passed over, as Pi's
    segments pass them, and the next piece starts after them."""
    places: list[int] = []
    place = 0
    for piece in pieces:
        if not line.startswith(piece, place):
            place = line.index(piece, place)
        places.append(place)
        place += len(piece)
    return places


#: A line's rows: where each starts and ends in it.
Wrapped = tuple[tuple[int, int], ...]


def line_rows(line: str, width: int, markers: Collection[int] = ()) -> Wrapped:
    """:func:`word_wrap` of one line whose pastes numbered ``markers`` show as markers; a
    line that fits is one row without being segmented."""
    if not line or visible_width(line) <= width:
        return ((0, len(line)),)
    if line.isascii() and line.isprintable() and not (markers and "[paste #" in line):
        return _ascii_rows(line, width)
    return tuple(word_wrap(line, width, graphemes(line, markers)))


class LineRows:
    """The rows of a text's lines at one width (:func:`line_rows`), each line's kept while
    the text holds it: a text is wrapped again at every frame and at every ↑ or ↓, and
    between two of them only the line edited changes. One is shared by a field and the
    window drawing it, so a move finds the lines the last frame wrapped."""

    def __init__(self) -> None:
        #: The width in cells the lines were last wrapped to (Pi's ``lastWidth``: 80 before
        #: they are drawn).
        self.width = 80
        self._markers: frozenset[int] = frozenset()
        self._known: dict[str, Wrapped] = {}

    def of(self, lines: Iterable[str], width: int, markers: Collection[int]) -> list[Wrapped]:
        """Each of ``lines`` wrapped to ``width`` cells."""
        kept = frozenset(markers)
        known = self._known if (width, kept) == (self.width, self._markers) else {}
        self.width, self._markers = width, kept
        wrapped: dict[str, Wrapped] = {}
        found: list[Wrapped] = []
        for line in lines:
            rows = wrapped.get(line) or known.get(line) or line_rows(line, width, kept)
            wrapped[line] = rows
            found.append(rows)
        self._known = wrapped
        return found


def _ascii_rows(line: str, width: int) -> Wrapped:
    """:func:`word_wrap` of a line of printable ASCII, a row at a time rather than a
    character at a time: each character is one cell and the space is the only blank, so a
    full row ends after the last space before a word that it holds (else where it is
    full), and the next row starts there."""
    rows: list[tuple[int, int]] = []
    start = 0
    while len(line) - start > width:
        over = start + width  # the first character the row has no room for
        space = line.rfind(" ", start, over)
        while space >= start and line[space + 1] == " ":
            space = line.rfind(" ", start, space)
        end = space + 1 if space >= start else over
        rows.append((start, end))
        start = end
    rows.append((start, len(line)))
    return tuple(rows)


def ends_its_line(rows: Sequence[Row], index: int) -> bool:
    """Whether row ``index`` is the last its line is drawn over."""
    return index == len(rows) - 1 or rows[index + 1].line_start != rows[index].line_start


def _is_cjk(piece: str) -> bool:
    return not is_paste_marker(piece) and cjk_break(piece)


class TextField(LineField):
    """Several lines being edited, as one text with line feeds and one cursor."""

    #: The width in cells the lines are wrapped to for ↑ and ↓ (Pi's ``lastWidth``: what
    #: the field was last drawn at, 80 before it is drawn).
    wrap_width: int = 80
    #: Where the lines' rows are kept between two moves (a window drawing the field may
    #: share its own).
    line_rows: LineRows | None = None

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
        # At the end of the last line: nothing moves, but a move up keeps this column of
        # its row.
        self._last = None
        rows = self.rows()
        self._preferred = js_length(self.value[rows[self._row_of_cursor(rows)].start : self.cursor])

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
        """↑: to the row above; on the first row to its start (already there: nothing,
        as Pi's editor then looks for a history this text has none of)."""
        self._last = None
        rows = self.rows()
        current = self._row_of_cursor(rows)
        if current == 0:
            if self.value and self.cursor != 0:
                self._set_cursor(0)
            return
        self._move_to_row(rows, current, current - 1)

    def cursor_down(self) -> None:
        """↓: to the row below; on the last row to the end of its line."""
        self._last = None
        rows = self.rows()
        current = self._row_of_cursor(rows)
        if current == len(rows) - 1:
            self._set_cursor(self._line_end())
            return
        self._move_to_row(rows, current, current + 1)

    def cursor_page(self, direction: int, rows_per_page: int) -> None:
        """Pi's ``pageScroll``: ``rows_per_page`` rows up (``direction`` -1) or down (1),
        stopping at the first or the last row, the column kept as ↑ and ↓ keep it."""
        self._last = None
        rows = self.rows()
        current = self._row_of_cursor(rows)
        target = max(0, min(len(rows) - 1, current + direction * rows_per_page))
        self._move_to_row(rows, current, target)

    def on_first_row(self) -> bool:
        """Whether the cursor is on the first row the text is drawn over."""
        return self._row_of_cursor(self.rows()) == 0

    def on_last_row(self) -> bool:
        """Whether the cursor is on the last row the text is drawn over."""
        rows = self.rows()
        return self._row_of_cursor(rows) == len(rows) - 1

    # The rows the lines are wrapped into, which ↑ and ↓ move between.

    def rows(self) -> list[Row]:
        """The rows the text is drawn over at :attr:`wrap_width` (Pi's visual lines)."""
        if self.line_rows is None:
            self.line_rows = LineRows()
        rows: list[Row] = []
        line_start = 0
        lines = self.value.split("\n")
        wrapped = self.line_rows.of(lines, self.wrap_width, self._paste_numbers())
        for line, line_wrapped in zip(lines, wrapped, strict=True):
            for begin, end in line_wrapped:
                rows.append(Row(line_start, line_start + begin, line_start + end))
            line_start += len(line) + 1
        return rows

    def _row_at(self, rows: list[Row], line_start: int, column: int) -> int:
        """Pi's ``findVisualLineAt``: the row of the line starting at ``line_start`` that
        ``column`` (UTF-16 units into the line) stands on: at a wrapped row's end the next
        row, at the line's end its last row; a column past the line, the text's last row."""
        value = self.value
        for index, row in enumerate(rows):
            if row.line_start != line_start:
                continue
            offset = column - js_length(value[line_start : row.start])
            length = js_length(value[row.start : row.end])
            at_end = offset == length and ends_its_line(rows, index)
            if offset >= 0 and (offset < length or at_end):
                return index
        return len(rows) - 1

    def _row_of_cursor(self, rows: list[Row]) -> int:
        start = self._line_start()
        return self._row_at(rows, start, js_length(self.value[start : self.cursor]))

    def _move_to_row(self, rows: list[Row], current: int, target: int) -> None:
        """Pi's ``moveToVisualLine``: the column kept or clamped by its sticky-column rules,
        then moved back to the start of a grapheme it would split."""
        source, goal = rows[current], rows[target]
        value = self.value
        if self._snapped_from is not None:
            snapped = rows[self._row_at(rows, source.line_start, self._snapped_from)]
            column = self._snapped_from - js_length(value[snapped.line_start : snapped.start])
        else:
            column = js_length(value[source.start : self.cursor])
        source_max = js_length(value[source.start : source.end])
        if not ends_its_line(rows, current):
            source_max = max(0, source_max - 1)
        target_max = js_length(value[goal.start : goal.end])
        if not ends_its_line(rows, target):
            target_max = max(0, target_max - 1)
        moved = self._vertical_column(column, source_max, target_max)
        line_end = value.find("\n", goal.line_start)
        line = value[goal.line_start : len(value) if line_end < 0 else line_end]
        at = min(js_length(value[goal.line_start : goal.start]) + moved, js_length(line))
        pieces = self._graphemes(line)
        offset = passed = 0  # UTF-16 units to the piece, and its string index
        for grapheme, place in zip(pieces, _places(line, pieces), strict=True):
            offset += js_length(line[passed:place])
            passed = place
            size = js_length(grapheme)
            if offset > at:
                break
            if size > 1 and at < offset + size:
                segment_start = goal.line_start + place
                if segment_start < goal.start and target > current:
                    # A grapheme wider than a row, already passed on the way down: on
                    # to the first row after it.
                    after = segment_start + len(grapheme)
                    following = target + 1
                    while following < len(rows) and rows[following].start < after:
                        following += 1
                    if following < len(rows):
                        # From where the cursor was put on the way, as Pi's editor
                        # measures the column again.
                        self.cursor = goal.line_start + _index_at_units(line, at)
                        self._move_to_row(rows, current, following)
                        return
                self._snapped_from = at
                self.cursor = segment_start
                return
        self.cursor = goal.line_start + _index_at_units(line, at)
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
