"""Telling the user about the parts of a session file a command could not use."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ctxmodes.terminal_text import visible

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

#: Warnings of one kind shown in full; the rest are counted in one line.
SHOWN_PER_KIND: Final = 5


def _print_bounded(where: str, items: Sequence[object], suffix: str, rest: str) -> None:
    # A warning quotes the file (its name, ids, the start of a line): shown, never obeyed.
    where = visible(where)
    for item in items[:SHOWN_PER_KIND]:
        print(f"ctxmodes: warning: {where}: {visible(str(item))}{suffix}", file=sys.stderr)
    if len(items) > SHOWN_PER_KIND:
        print(
            f"ctxmodes: warning: {where}: … and {len(items) - SHOWN_PER_KIND} more {rest}",
            file=sys.stderr,
        )


def warn_about_session(path: str | os.PathLike[str], manager: SessionManager) -> None:
    """Print the skipped lines and structural problems of the opened file on standard error.

    Commands that read a session call this right after opening it, so that no line is ever
    left out without a word; a damaged file with thousands of bad lines gets the first few
    and a count of the rest (``--strict`` turns them into an error).
    """
    where = os.fspath(path)
    _print_bounded(where, manager.skipped_lines, " (skipped)", "skipped lines")
    _print_bounded(where, manager.warnings, "", "warnings")
