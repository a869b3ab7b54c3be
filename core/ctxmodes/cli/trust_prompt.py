"""Asking on the terminal whether to trust a project, before the interactive session opens."""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes.resources.trust import TrustChoice


def ask_on_terminal(question: str, choices: Sequence[TrustChoice]) -> TrustChoice | None:
    """The answer picked with the arrow keys and Enter; Ctrl+C or Escape picks none (the
    project is then not trusted, and nothing is saved)."""
    from prompt_toolkit.shortcuts import choice

    try:
        index: int = choice(
            question, options=[(i, option.label) for i, option in enumerate(choices)]
        )
    except (KeyboardInterrupt, EOFError):
        return None
    return choices[index]
