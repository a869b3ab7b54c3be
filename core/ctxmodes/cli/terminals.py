"""Whether the process's standard streams are terminals. A stream the process was started
without (``<&-``) is ``None`` in Python, and counts as no terminal and nothing piped in.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import sys
from typing import TextIO


def is_terminal(stream: TextIO | None) -> bool:
    return stream is not None and stream.isatty()


def on_a_terminal() -> bool:
    """Standard input and output are both terminals."""
    return is_terminal(sys.stdin) and is_terminal(sys.stdout)


def stdin_piped() -> bool:
    """Standard input is open and not a terminal (a pipe, a file, ``/dev/null``)."""
    return sys.stdin is not None and not sys.stdin.isatty()
