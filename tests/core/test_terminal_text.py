"""What commands write instead of the characters a terminal would obey."""

from __future__ import annotations

import pytest

from ctxmodes.terminal_text import steers_a_terminal, visible, visible_lines

STEERING = [
    ("\x1b", "\\u001b"),  # starts every escape sequence
    ("\x07", "\\u0007"),  # ends an operating system command (title, clipboard)
    ("\x08", "\\u0008"),  # backspace: draws over the character before
    ("\r", "\\u000d"),  # carriage return on its own: draws over the line
    ("\x7f", "\\u007f"),
    ("\x9b", "\\u009b"),  # the one-byte form of an escape sequence's start
    ("\u202e", "\\u202e"),  # right-to-left override: reorders what follows
    ("\u2066", "\\u2066"),
    ("\u2028", "\\u2028"),  # breaks the line in some terminals
]


@pytest.mark.parametrize(("character", "written"), STEERING)
def test_each_steering_character_is_written_as_an_escape(character: str, written: str) -> None:
    assert visible(f"a{character}b") == f"a{written}b"
    assert visible_lines(f"a{character}b") == f"a{written}b"
    assert steers_a_terminal(f"a{character}b")


def test_one_line_escapes_line_breaks_and_tabs_and_lines_keep_them() -> None:
    assert visible("a\nb\tc") == "a\\u000ab\\u0009c"
    assert visible_lines("a\nb\tc") == "a\nb\tc"
    # A Windows line break is a line break; a carriage return alone is not.
    assert visible_lines("a\r\nb\rc") == "a\nb\\u000dc"


def test_ordinary_text_is_left_as_it_is() -> None:
    text = "naïve 日本語 emoji 🎉 [bold]markup[/bold] \\u001b quoted"
    assert visible(text) == text
    assert visible_lines(text) == text
    assert not steers_a_terminal(text)
