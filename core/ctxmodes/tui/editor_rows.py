"""Internal to ctxmodes: the draft drawn in rows as Pi's editor draws it.

prompt_toolkit wraps a line wherever the window's edge falls, cutting a word in two. Pi's
editor wraps after the spaces before a word, or between CJK characters, and keeps a cell
after a row's last character for the cursor. :class:`WrappedBufferControl` hands its window
the draft already in those rows (the window itself wraps nothing), each row a slice of the
buffer's own styled line, so selections and search matches keep their colours; and it keeps
the width it wrapped at, which ↑ and ↓ move by.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection
from typing import Any

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout.controls import BufferControl, UIContent
from prompt_toolkit.layout.utils import explode_text_fragments

from ctxmodes.tui.text_field import LineRows

#: Cells kept after a row's last character for the cursor, as Pi's editor keeps one.
CURSOR_CELLS = 1


class WrappedBufferControl(BufferControl):
    """A :class:`BufferControl` whose lines are wrapped into rows as Pi's editor wraps them,
    ``reserved`` cells of each row left to what the window puts before it (a prompt).

    A frame wraps only the lines it has not wrapped before at that width
    (:class:`~ctxmodes.tui.text_field.LineRows`), and styles only the rows it shows: a long
    draft costs a lookup a line, not a wrap."""

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
        #: The draft's lines wrapped, and the width they were last wrapped to (Pi's
        #: ``lastWidth``), which the editor's moves share.
        self.line_rows = LineRows()
        #: The rows last drawn: each its line's number, and where in the line it starts
        #: and ends.
        self.rows: list[tuple[int, int, int]] = []
        self._document = buffer.document
        #: The document :attr:`rows` were made from (a frame asks for them twice).
        self._rows_document: Document | None = None

    def _create_get_processed_line_func(
        self, document: Document, width: int, height: int
    ) -> Callable[[int], Any]:
        # The document drawn: the buffer's, or the one a history search previews.
        self._document = document
        return super()._create_get_processed_line_func(document, width, height)

    def _wrap(self, document: Document, width: int) -> list[tuple[int, int, int]]:
        """:attr:`rows` for ``document`` in a window ``width`` cells wide."""
        wrap_width = max(1, width - self._reserved - CURSOR_CELLS)
        if (document, wrap_width) != (self._rows_document, self.line_rows.width):
            self._rows_document = document
            wrapped = self.line_rows.of(document.lines, wrap_width, self._markers())
            self.rows = [
                (number, start, end)
                for number, line_wrapped in enumerate(wrapped)
                for start, end in line_wrapped
            ]
        return self.rows

    def row_count(self, width: int) -> int:
        """How many rows the draft takes in a window ``width`` cells wide (before the
        window is drawn: the layout sizes what goes with it by this)."""
        return len(self._wrap(self.buffer.document, width))

    def create_content(self, width: int, height: int, preview_search: bool = False) -> UIContent:
        content = super().create_content(width, height, preview_search)
        rows = self._wrap(self._document, width)
        styled: dict[int, StyleAndTextTuples] = {}

        def row_at(point: Point | None) -> Point | None:
            """Where a place in a line is in the rows: a wrapped row's end starts the next
            row, the line's end is its last row's (Pi's editor's rule)."""
            if point is None:
                return None
            first = bisect_left(rows, (point.y, -1, -1))
            for index in range(first, len(rows)):
                number, start, end = rows[index]
                last = index + 1 == len(rows) or rows[index + 1][0] != number
                if start <= point.x and (point.x < end or last):
                    return Point(x=point.x - start, y=index)
            return point

        def get_row(index: int) -> StyleAndTextTuples:
            number, start, end = rows[index]
            cells = styled.get(number)
            if cells is None:
                # The line's styled characters, its cursor cell (a space) last.
                cells = styled[number] = explode_text_fragments(content.get_line(number))
            return cells[start : end + 1] if end == len(cells) - 1 else cells[start:end]

        return UIContent(
            get_line=get_row,
            line_count=len(rows),
            cursor_position=row_at(content.cursor_position) or Point(0, 0),
            menu_position=row_at(content.menu_position),
            show_cursor=content.show_cursor,
        )
