"""Telling the user about the parts of a session file a command could not use."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager


def warn_about_session(path: str | os.PathLike[str], manager: SessionManager) -> None:
    """Print each skipped line and structural problem of the opened file on standard error.

    Commands that read a session call this right after opening it, so that no line is ever
    left out without a word.
    """
    for line in manager.skipped_lines:
        print(f"ctxmodes: warning: {os.fspath(path)}: {line} (skipped)", file=sys.stderr)
    for warning in manager.warnings:
        print(f"ctxmodes: warning: {os.fspath(path)}: {warning}", file=sys.stderr)
