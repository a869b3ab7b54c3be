"""Keeping model-controlled text from shaping a window marker.

A window marker reaches the model in developer role, so its line structure must come from
ctxmodes alone. Note paths are chosen by the model and history ids come from session entries,
so each value that enters a marker goes through :func:`marker_value` first: a value made of
ordinary characters is shown as it is (the common case, byte-identical to the shared format);
any other value is shown as a JSON string whose line breaks, control characters and angle
brackets are ``\\u`` escapes, so it can neither start a new line nor close a tag.
"""

from __future__ import annotations

import re

from ctxmodes.session import codec

#: C0 controls (NUL included), DEL, C1 controls, and the Unicode line and paragraph
#: separators, which several tokenizers and ``str.splitlines`` treat as line breaks.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: What :func:`marker_value` escapes: the control characters plus ``<`` and ``>``.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029<>]")


def has_control_character(value: str) -> bool:
    return CONTROL_CHARACTERS.search(value) is not None


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_json_text(text: str) -> str:
    """JSON text with every character :func:`marker_value` would quote written as a ``\\u``
    escape (still valid JSON meaning the same value; orjson leaves DEL, C1, U+2028/U+2029
    and angle brackets raw)."""
    return _UNSAFE.sub(_escape, text)


def marker_value(value: str) -> str:
    """``value`` as it may appear inside a marker line (see the module docstring)."""
    plain = value and value.strip() == value and not value.startswith('"')
    if plain and _UNSAFE.search(value) is None:
        return value
    return escape_json_text(codec.dumps(value).decode())
