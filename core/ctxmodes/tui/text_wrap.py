"""Prose wrapped at spaces for a terminal of a given width: a question or a title that a
character-wise wrap would cut mid-word (or start a line with its comma)."""

from __future__ import annotations

import textwrap


def wrap_words(text: str, width: int) -> str:
    """``text`` with each of its lines wrapped at spaces to at most ``width`` characters
    (a word longer than that is cut); blank lines are kept."""
    return "\n".join(
        "\n".join(textwrap.wrap(line, max(1, width), break_on_hyphens=False) or [""])
        for line in text.splitlines()
    )


#: Pi draws a tab three cells wide when it measures a line.
_TAB_CELLS = 3


def _cells(char: str) -> int:
    from prompt_toolkit.utils import get_cwidth

    return _TAB_CELLS if char == "\t" else max(0, get_cwidth(char))


def _printable_ascii(text: str) -> bool:
    """Whether each character of ``text`` takes one cell (Pi's fast path too)."""
    return text.isascii() and text.isprintable()


def text_cells(text: str) -> int:
    """The terminal cells ``text`` takes, as Pi measures a line (a tab three)."""
    if _printable_ascii(text):
        return len(text)
    return sum(_cells(char) for char in text)


def truncate_to_width(text: str, width: int, ellipsis: str = "...") -> str:
    """``text`` cut to ``width`` terminal cells, ending in ``ellipsis`` when cut, as Pi's
    ``truncateToWidth`` cuts a row (a width no wider than the ellipsis keeps what fits of
    the ellipsis alone). Like Pi's, it reads ``text`` only until it is known too wide, so a
    long first message costs no more than a short one."""
    if width <= 0 or not text:
        return ""
    room = width - len(ellipsis)
    if _printable_ascii(text):
        if len(text) <= width:
            return text
        return ellipsis[:width] if room <= 0 else text[:room] + ellipsis
    kept = 0  # characters kept, all of them within ``room`` cells
    used = 0
    fitting = True
    for index, char in enumerate(text):
        used += _cells(char)
        if fitting and used <= room:
            kept = index + 1
        else:
            fitting = False
        if used > width:
            break
    else:
        return text
    if room <= 0:
        return ellipsis[:width]
    return text[:kept] + ellipsis
