"""JavaScript behaviours the wire formats depend on, reproduced exactly.

pi-ai is JavaScript: ids are hashed over UTF-16 code units, JSON is written by
``JSON.stringify`` (no spaces, integral numbers without a fraction), lone surrogates are
dropped before sending, and tool-call arguments are parsed from partial JSON while they
stream. Transports use these helpers so that what they send and store equals Pi's.
"""

from __future__ import annotations

import functools
import os
import platform
import re
from typing import Any

import jiter
import orjson

from ctxmodes.session.codec import dumps as js_dumps
from ctxmodes.session.jsvalues import js_length

__all__ = [
    "dumps",
    "js_length",
    "parse_streaming_json",
    "pi_user_agent",
    "repair_json",
    "sanitize_surrogates",
    "short_hash",
    "stringify",
]

_MASK = 0xFFFFFFFF
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
#: What :func:`repair_json` could change: a raw control character, or a backslash that does
#: not start a valid escape. Text without either is its own repair (and is not walked
#: character by character: a 10 MB argument cut mid-stream is parsed in milliseconds).
_MAY_NEED_REPAIR = re.compile(r'[\x00-\x1f]|\\(?:[^"\\/bfnrtu]|u(?![0-9a-fA-F]{4})|$)')


def _imul(a: int, b: int) -> int:
    return (a * b) & _MASK


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if value == 0:
        return "0"
    out = []
    while value:
        value, rest = divmod(value, 36)
        out.append(digits[rest])
    return "".join(reversed(out))


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash``: a 53-bit-ish string hash over UTF-16 code units, base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(units), 2):
        unit = units[index] | (units[index + 1] << 8)
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & _MASK) + _base36(h1 & _MASK)


def sanitize_surrogates(text: str) -> str:
    """Drop unpaired surrogates (a Python ``str`` holds a valid pair as one character)."""
    if text.isascii():  # most deltas: nothing to search
        return text
    return _LONE_SURROGATE.sub("", text)


def stringify(value: Any) -> str:
    """``JSON.stringify(value)`` for JSON data."""
    return js_dumps(value).decode()


def dumps(value: Any) -> bytes:
    """A request body, as ``JSON.stringify`` would write it."""
    return js_dumps(value)


def _escape_control(char: str) -> str:
    named = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return named.get(char) or f"\\u{ord(char):04x}"


def repair_json(text: str) -> str:
    """Escape raw control characters inside strings and double bad backslashes (pi-ai's
    ``repairJson``), so models that emit slightly broken JSON still get their arguments."""
    out: list[str] = []
    in_string = False
    index = 0
    while index < len(text):
        char = text[index]
        if not in_string:
            out.append(char)
            in_string = char == '"'
        elif char == '"':
            out.append(char)
            in_string = False
        elif char == "\\":
            following = text[index + 1] if index + 1 < len(text) else None
            if following is None:
                out.append("\\\\")
            elif following == "u" and _HEX4.fullmatch(text[index + 2 : index + 6]):
                out.append(text[index : index + 6])
                index += 5
            elif following in _VALID_ESCAPES:
                out.append("\\" + following)
                index += 1
            else:
                out.append("\\\\")
        else:
            out.append(_escape_control(char) if ord(char) < 0x20 else char)
        index += 1
    return "".join(out)


def _loads(text: str) -> Any:
    return orjson.loads(text)


def parse_streaming_json(text: str | None) -> Any:
    """Arguments from possibly incomplete JSON (pi-ai's ``parseStreamingJson``): the full
    parse, else the repaired parse, else the longest valid prefix, else ``{}``."""
    if not text or not text.strip():
        return {}
    with _suppress():
        return _loads(text)
    repaired = repair_json(text) if _MAY_NEED_REPAIR.search(text) else text
    if repaired != text:
        with _suppress():
            return _loads(repaired)
    for candidate in (text, repaired):
        with _suppress():
            result = jiter.from_json(candidate.encode(), partial_mode="trailing-strings")
            return {} if result is None else result
    return {}


class _suppress:
    """``contextlib.suppress(Exception)`` without its per-call allocation cost on hot paths."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, traceback: object) -> bool:
        return kind is not None and issubclass(kind, Exception)  # type: ignore[arg-type]


@functools.cache
def pi_user_agent() -> str:
    """``pi (<os.platform()> <os.release()>; <os.arch()>)`` as Node reports them."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "i686": "ia32"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    system = {"windows": "win32"}.get(platform.system().lower(), platform.system().lower())
    release = os.uname().release if hasattr(os, "uname") else platform.release()
    return f"pi ({system} {release}; {arch})"
