"""Telling the user about the parts of a session file a command could not use."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

#: Warnings of one kind shown in full; the rest are counted in one line.
SHOWN_PER_KIND: Final = 5


def _bounded(where: str, items: Sequence[object], suffix: str, rest: str) -> list[str]:
    if not items:
        return []
    # Loaded only for a file with something to say about (most files have nothing).
    from ctxmodes.terminal_text import visible

    # A warning quotes the file (its name, ids, the start of a line): shown, never obeyed.
    where = visible(where)
    lines = [f"{where}: {visible(str(item))}{suffix}" for item in items[:SHOWN_PER_KIND]]
    if len(items) > SHOWN_PER_KIND:
        lines.append(f"{where}: … and {len(items) - SHOWN_PER_KIND} more {rest}")
    return lines


def session_warnings(path: str | os.PathLike[str], manager: SessionManager) -> list[str]:
    """The skipped lines and structural problems of the opened file, one line each (the
    first few of a kind, then a count of the rest)."""
    where = os.fspath(path)
    return [
        *_bounded(where, manager.skipped_lines, " (skipped)", "skipped lines"),
        *_bounded(where, manager.warnings, "", "warnings"),
    ]


def warn_about_session(path: str | os.PathLike[str], manager: SessionManager) -> None:
    """Print :func:`session_warnings` on standard error.

    Commands that read a session call this right after opening it, so that no line is ever
    left out without a word; a damaged file with thousands of bad lines gets the first few
    and a count of the rest (``--strict`` turns them into an error).
    """
    for line in session_warnings(path, manager):
        print(f"ctxmodes: warning: {line}", file=sys.stderr)
