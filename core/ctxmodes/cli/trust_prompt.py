"""Asking on the terminal whether to trust a project, before the interactive session opens."""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes.resources.trust import TrustChoice


def ask_on_terminal(question: str, choices: Sequence[TrustChoice]) -> TrustChoice | None:
    """The answer picked with the arrow keys and Enter; Ctrl+C or Escape picks none (the
    project is then not trusted, and nothing is saved)."""
    import os
    import sys

    from prompt_toolkit.shortcuts import choice

    from ctxmodes.tui.text_wrap import wrap_words

    # The dialog indents the question by one column and would wrap it mid-word. The
    # terminal's own width: a COLUMNS inherited from elsewhere may be stale.
    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        columns = 80
    try:
        index: int = choice(
            wrap_words(question, columns - 2),
            options=[(i, option.label) for i, option in enumerate(choices)],
        )
    except (KeyboardInterrupt, EOFError):
        return None
    return choices[index]
