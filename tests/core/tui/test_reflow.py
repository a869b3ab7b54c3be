"""Where the live region starts once a terminal that re-lays its rows has narrowed."""

from __future__ import annotations

from prompt_toolkit.data_structures import Point
from prompt_toolkit.layout.screen import Char, Screen

from ctxmodes.tui.reflow import reflowed_cursor, reflows


def drawn(*rows: str) -> Screen:
    screen = Screen()
    for y, text in enumerate(rows):
        for x, char in enumerate(text):
            screen.data_buffer[y][x] = Char(char)
    return screen


def test_each_row_drawn_takes_the_rows_its_text_needs_at_the_new_width() -> None:
    screen = drawn("\u203a " + "x" * 98, "/home/me/project", "model • mode • " + "y" * 50)
    # The cursor on the footer's second row: the editor's row now takes two rows at 60
    # columns, the folder's one, and the cursor's column 70 is on the footer row's second.
    assert reflowed_cursor(screen, Point(x=70, y=2), 60) == Point(x=10, y=4)
    # At 30 columns: four rows for the editor's, one for the folder, three for the cursor's.
    assert reflowed_cursor(screen, Point(x=70, y=2), 30) == Point(x=10, y=7)


def test_trailing_spaces_and_empty_rows_count_as_the_terminal_counts_them() -> None:
    screen = drawn("\u203a draft" + " " * 90, "", "footer")
    # Spaces after the text were never written to the row: it stays one row; an empty row
    # is still a row.
    assert reflowed_cursor(screen, Point(x=0, y=2), 40) == Point(x=0, y=2)


def test_only_xterms_kind_cuts_its_rows_instead() -> None:
    assert reflows({"TERM": "xterm-256color"})
    assert reflows({"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0"})
    assert not reflows({"TERM": "xterm", "XTERM_VERSION": "XTerm(379)"})
