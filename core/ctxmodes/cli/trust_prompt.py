"""Asking on the terminal whether to trust a project, before the interactive session opens."""

from __future__ import annotations

from collections.abc import Sequence

from ctxmodes.resources.trust import TrustChoice
from ctxmodes.tui.startup_picker import choose


def ask_on_terminal(question: str, choices: Sequence[TrustChoice]) -> TrustChoice | None:
    """The answer picked (see :func:`~ctxmodes.tui.startup_picker.choose`); none when
    cancelled: the project is then not trusted, and nothing is saved."""
    picked = choose(question, [choice.label for choice in choices])
    return None if picked is None else choices[picked]
