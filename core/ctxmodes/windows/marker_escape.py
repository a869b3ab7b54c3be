"""Keeping model-controlled text from shaping a window marker.

A window marker reaches the model in developer role, so its line structure must come from
ctxmodes alone. Note paths are chosen by the model and history ids come from session entries,
so each value that enters a marker goes through :func:`marker_value` first: a value made of
ordinary characters is shown as it is (the common case, byte-identical to the shared format);
any other value is shown as a JSON string whose line breaks, control characters, invisible
format characters (bidirectional controls, zero-width characters, the byte-order mark) and
angle brackets are ``\\u`` escapes, so it can neither start a new line nor close a tag, nor
read differently from what it is.
"""

from __future__ import annotations

import re

from ctxmodes.session import codec

#: C0 controls (NUL included), DEL, C1 controls, and the Unicode line and paragraph
#: separators, which several tokenizers and ``str.splitlines`` treat as line breaks.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: The characters of Unicode category Cf ("format": bidirectional controls, zero-width
#: characters, the byte-order mark, tag characters and the like), as of Unicode 14 (Python
#: 3.11); written out rather than derived at import, which would cost start-up time.
FORMAT_CHARACTERS = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)
#: What :func:`marker_value` escapes: the control and format characters, ``<`` and ``>``.
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029<>]|{FORMAT_CHARACTERS.pattern}")


def has_control_character(value: str) -> bool:
    return CONTROL_CHARACTERS.search(value) is not None


def has_format_character(value: str) -> bool:
    return FORMAT_CHARACTERS.search(value) is not None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        # Beyond the BMP: the JSON escape is the surrogate pair.
        high, low = divmod(code - 0x10000, 0x400)
        return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
    return f"\\u{code:04x}"


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
