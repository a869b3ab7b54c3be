"""Text from a session, a model or a tool, made safe to write to a terminal.

Such text can hold what a terminal obeys rather than shows: escape sequences (which set the
window title, write the clipboard, clear the screen or restyle what follows), carriage
returns and backspaces (which draw over what came before) and bidirectional controls
(which reorder it). Every command that shows such text writes each of these characters as
a JSON-style ``\\u`` escape instead: what a session holds is shown, never obeyed. JSON
output needs none of this: its encoder escapes control characters itself.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import re
from typing import Final

# C1 controls include 0x9b, which some terminals read as the start of an escape sequence;
# U+2028 and U+2029 break lines in some of them.
_STEERING: Final = "\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: Everything that steers a terminal, line breaks and tabs included (for one-line output).
_UNSAFE_ON_A_LINE: Final = re.compile(f"[\x00-\x1f{_STEERING}]")
#: The same, except line breaks and tabs (for text shown over several lines).
_UNSAFE_IN_LINES: Final = re.compile(f"[\x00-\x08\x0b-\x1f{_STEERING}]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def steers_a_terminal(text: str) -> bool:
    """Whether :func:`visible` would change ``text``."""
    return _UNSAFE_ON_A_LINE.search(text) is not None


def visible(text: str) -> str:
    """``text`` on one line, every character that could move the cursor, start an escape
    sequence, break the line or reorder what follows written as a ``\\u`` escape."""
    return _UNSAFE_ON_A_LINE.sub(_escape, text)


def visible_lines(text: str) -> str:
    """:func:`visible`, except that line breaks and tabs are kept (``\\r\\n`` as a line
    break: only a carriage return on its own draws over a line)."""
    return _UNSAFE_IN_LINES.sub(_escape, text.replace("\r\n", "\n"))
