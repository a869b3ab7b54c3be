"""Internal to ctxmodes: the draft drawn in rows as Pi's editor draws it.

prompt_toolkit wraps a line wherever the window's edge falls, cutting a word in two. Pi's
editor wraps after the spaces before a word, or between CJK characters, and keeps a cell
after a row's last character for the cursor. :class:`WrappedBufferControl` hands its window
the draft already in those rows (the window itself wraps nothing), each row a slice of the
buffer's own styled line, so selections and search matches keep their colours; and it keeps
the width it wrapped at, which ↑ and ↓ move by.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout.controls import BufferControl, UIContent
from prompt_toolkit.layout.utils import explode_text_fragments

from ctxmodes.tui.text_field import line_rows

#: Cells kept after a row's last character for the cursor, as Pi's editor keeps one.
CURSOR_CELLS = 1


class WrappedBufferControl(BufferControl):
    """A :class:`BufferControl` whose lines are wrapped into rows as Pi's editor wraps them,
    ``reserved`` cells of each row left to what the window puts before it (a prompt)."""

    def __init__(
        self,
        buffer: Buffer,
        *,
        reserved: int,
        markers: Callable[[], Collection[int]] = tuple,
        **options: Any,
    ) -> None:
        super().__init__(buffer, **options)
        self._reserved = reserved
        self._markers = markers
        #: The width in cells the draft was last wrapped to (Pi's ``lastWidth``).
        self.wrap_width = 80
        #: The rows last drawn: each its line's number, and where in the line it starts
        #: and ends.
        self.rows: list[tuple[int, int, int]] = []

    def create_content(self, width: int, height: int, preview_search: bool = False) -> UIContent:
        content = super().create_content(width, height, preview_search)
        self.wrap_width = max(1, width - self._reserved - CURSOR_CELLS)
        markers = self._markers()
        # Every line's styled characters, its cursor cell (a space) last.
        lines: list[StyleAndTextTuples] = [
            explode_text_fragments(content.get_line(n)) for n in range(content.line_count)
        ]
        rows: list[tuple[int, int, int]] = []
        self.rows = rows
        for number, cells in enumerate(lines):
            text = "".join(cell[1] for cell in cells[:-1])
            wrapped = line_rows(text, self.wrap_width, markers)
            rows.extend((number, start, end) for start, end in wrapped)

        def row_at(point: Point | None) -> Point | None:
            """Where a place in a line is in the rows: a wrapped row's end starts the next
            row, the line's end is its last row's (Pi's editor's rule)."""
            if point is None:
                return None
            for index, (number, start, end) in enumerate(rows):
                last = index + 1 == len(rows) or rows[index + 1][0] != number
                if number == point.y and start <= point.x and (point.x < end or last):
                    return Point(x=point.x - start, y=index)
            return point

        def get_row(index: int) -> StyleAndTextTuples:
            number, start, end = rows[index]
            cells = lines[number]
            last = end == len(cells) - 1
            return cells[start : end + 1] if last else cells[start:end]

        return UIContent(
            get_line=get_row,
            line_count=len(rows),
            cursor_position=row_at(content.cursor_position) or Point(0, 0),
            menu_position=row_at(content.menu_position),
            show_cursor=content.show_cursor,
        )
