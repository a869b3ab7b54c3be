"""The class of every ``ctxmodes`` argument parser: argparse's, laid out for a terminal
measured without :mod:`shutil`.

argparse makes a help formatter for every argument it is given (to check the argument's
metavar), and its formatter imports :mod:`shutil`, and with it the compression modules, to
measure the terminal: about 2 ms of every start, for help that is almost never shown.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["CommandParser"]

# shutil.get_terminal_size's answer where nothing says better.
_FALLBACK_COLUMNS = 80


def terminal_columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` finds it: ``$COLUMNS``, else
    the width of the terminal standard output is, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or _FALLBACK_COLUMNS


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's layout, as wide as the terminal less two columns, as argparse makes it."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class CommandParser(argparse.ArgumentParser):
    """argparse's parser with :class:`_HelpFormatter` by default; its sub-command parsers
    are of this class too (argparse makes them of the class of the parser they belong to)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
