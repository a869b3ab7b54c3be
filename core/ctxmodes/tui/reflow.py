"""Where the live region is after the terminal narrows, for terminals that reflow their rows.

Internal to ctxmodes: not part of the API; it may change without notice.

prompt_toolkit redraws the live region (the editor, the footer) on a resize by going back up
as many rows as it drew and erasing from there down. Most terminals (tmux, VTE, Konsole,
iTerm2, kitty, Alacritty, WezTerm, Windows Terminal) re-lay their rows when they narrow: a row
longer than the new width now takes several, so going up only as many rows as were drawn
stops short, and the top of the old editor stays on the screen above the new one. Counting
the rows each drawn row takes at the new width puts the redraw back where the region starts.
xterm cuts its rows instead of re-laying them (it sets ``XTERM_VERSION``): there the drawn
rows are still one each, and nothing is changed.
"""

from __future__ import annotations

from collections.abc import Mapping

from prompt_toolkit.application import Application
from prompt_toolkit.data_structures import Point
from prompt_toolkit.layout.screen import Screen


def reflows(environ: Mapping[str, str]) -> bool:
    """Whether the terminal re-lays its rows when it narrows (all but xterm's kind)."""
    return "XTERM_VERSION" not in environ


def _drawn_cells(screen: Screen, row: int) -> int:
    """The cells of ``row`` that hold text: a terminal re-lays a row up to its last one."""
    cells = screen.data_buffer[row]
    return max((column + 1 for column, char in cells.items() if char.char != " "), default=0)


def reflowed_cursor(screen: Screen, cursor: Point, width: int) -> Point:
    """The cursor's place in the region drawn on ``screen`` (its rows counted from the
    region's first) once the terminal has re-laid those rows at ``width`` columns."""
    above = sum(max(1, -(-_drawn_cells(screen, row) // width)) for row in range(cursor.y))
    return Point(x=cursor.x % width, y=above + cursor.x // width)


class ReflowingApplication(Application[None]):
    """An application whose redraw after a narrowing starts where the region now starts, on a
    terminal that re-lays its rows (see the module)."""

    reflowing_terminal = True

    def _on_resize(self) -> None:
        renderer = self.renderer
        # prompt_toolkit's own record of what it drew and where its cursor is (private:
        # a version without it gets prompt_toolkit's redraw as it is).
        screen = getattr(renderer, "_last_screen", None)
        size = getattr(renderer, "_last_size", None)
        cursor = getattr(renderer, "_cursor_pos", None)
        width = self.output.get_size().columns
        narrowed = size is not None and 0 < width < size.columns
        if self.reflowing_terminal and screen is not None and cursor is not None and narrowed:
            renderer._cursor_pos = reflowed_cursor(screen, cursor, width)
        super()._on_resize()
