"""Where the live region is after the terminal narrows, for terminals that reflow their rows.

Internal to ctxmodes: not part of the API; it may change without notice.

prompt_toolkit redraws the live region (the editor, the footer) on a resize by going back up
as many rows as it drew and erasing from there down. Most terminals (tmux, VTE, Konsole,
iTerm2, kitty, Alacritty, WezTerm, Windows Terminal) re-lay their rows when they narrow: a row
longer than the new width now takes several, so going up only as many rows as were drawn
stops short, and the top of the old editor stays on the screen above the new one. Counting
the rows each drawn row takes at the new width puts the redraw back where the region starts;
it is done before whichever comes first after the narrowing, the resize's redraw or one a key
asked for, and only once.
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

    def _follow_reflow(self) -> None:
        """Once the terminal is narrower than at the last drawing: put prompt_toolkit's
        cursor where the re-laid rows have it, and forget that drawing, so that the next one
        is drawn whole from there (and the correction is made once)."""
        renderer = self.renderer
        # prompt_toolkit's own record of what it drew and where its cursor is (private:
        # a version without it gets prompt_toolkit's redraw as it is).
        screen = getattr(renderer, "_last_screen", None)
        size = getattr(renderer, "_last_size", None)
        cursor = getattr(renderer, "_cursor_pos", None)
        if not self.reflowing_terminal or screen is None or cursor is None or size is None:
            return
        width = self.output.get_size().columns
        if 0 < width < size.columns:
            moved = reflowed_cursor(screen, cursor, width)
            # Terminals leave the cursor at different columns of its row (tmux at the end
            # of the re-laid text): going back a whole row's width from any of them reaches
            # the first column, where the redraw starts.
            renderer._cursor_pos = Point(x=width - 1, y=moved.y)
            renderer._last_screen = None

    def _on_resize(self) -> None:
        self._follow_reflow()
        super()._on_resize()

    def _redraw(self, render_as_done: bool = False) -> None:
        # A drawing may come before the resize is handled (a key typed as the terminal
        # narrows): it starts from the same place, at the new width.
        self._follow_reflow()
        super()._redraw(render_as_done)
