"""Standard output and error that print any text a session holds.

JSON lets a string hold a lone UTF-16 surrogate (``"\\ud800"``), Pi writes such strings, and
they reach Python as unpaired surrogate code points, which a UTF-8 stream refuses to encode.
Node, printing the same string, writes U+FFFD REPLACEMENT CHARACTER in its place; the command
line does the same instead of failing half-way through its output. Where the stream already
turns undecodable bytes of file names back into those bytes (``surrogateescape``), it still
does.
"""

from __future__ import annotations

import codecs
import io
import sys
from typing import Final

_REPLACE: Final = "ctxmodes.replace-surrogates"
_ESCAPE_OR_REPLACE: Final = "ctxmodes.surrogateescape-or-replace"
_REPLACEMENT: Final = "\ufffd".encode()


def _replace(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return _REPLACEMENT * (error.end - error.start), error.end


def _escape_or_replace(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    replaced = (
        bytes([code - 0xDC00]) if 0xDC80 <= code <= 0xDCFF else _REPLACEMENT
        for code in map(ord, error.object[error.start : error.end])
    )
    return b"".join(replaced), error.end


codecs.register_error(_REPLACE, _replace)
codecs.register_error(_ESCAPE_OR_REPLACE, _escape_or_replace)


def tolerate_unencodable_text() -> None:
    """Let ``sys.stdout`` and ``sys.stderr`` write lone surrogates instead of raising
    ``UnicodeEncodeError`` (as U+FFFD on a UTF-8 stream, as ``?`` on any other)."""
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper):
            continue
        if codecs.lookup(stream.encoding).name != "utf-8":
            chosen = "replace" if stream.errors == "strict" else stream.errors
        elif stream.errors == "strict":
            chosen = _REPLACE
        elif stream.errors == "surrogateescape":
            chosen = _ESCAPE_OR_REPLACE
        else:
            continue
        stream.reconfigure(errors=chosen)
