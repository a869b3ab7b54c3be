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


def truncate_to_width(text: str, width: int, ellipsis: str = "...") -> str:
    """``text`` cut to ``width`` terminal cells, ending in ``ellipsis`` when cut, as Pi's
    ``truncateToWidth`` cuts a row (a width no wider than the ellipsis keeps what fits of
    the ellipsis alone)."""
    if width <= 0 or not text:
        return ""
    if sum(_cells(char) for char in text) <= width:
        return text
    room = width - len(ellipsis)
    if room <= 0:
        return ellipsis[:width]
    kept: list[str] = []
    used = 0
    for char in text:
        cells = _cells(char)
        if used + cells > room:
            break
        kept.append(char)
        used += cells
    return "".join(kept) + ellipsis
