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
