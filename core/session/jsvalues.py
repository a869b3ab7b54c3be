"""JavaScript value semantics that Pi's behaviour depends on."""

from __future__ import annotations

import math
import re
from typing import Any, Final

__all__ = ["js_to_number", "js_trim", "js_truthy"]

# String.prototype.trim() strips WhiteSpace and LineTerminator code points.
_JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_DECIMAL: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RADIX_PREFIXES: Final = {"0x": 16, "0o": 8, "0b": 2}
_INFINITIES: Final = {"Infinity": math.inf, "+Infinity": math.inf, "-Infinity": -math.inf}


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (empty arrays and objects are truthy)."""
    if value is None or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, int | float):
        return value == value and value != 0
    if isinstance(value, str):
        return value != ""
    return True


def js_trim(text: str) -> str:
    """``text.trim()`` with JavaScript's definition of whitespace."""
    return text.strip(_JS_WHITESPACE)


def js_to_number(value: Any) -> float:
    """``Number(value)`` for a JSON value, as JavaScript's relational operators convert it.

    Never raises: integers beyond the double range become infinities, and anything
    JavaScript cannot read as a number is NaN.
    """
    if value is None:
        return 0.0
    if isinstance(value, bool | int | float):
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str):
        return _string_to_number(value)
    if isinstance(value, list):
        # An array converts through its string form, the elements joined with ",": only an
        # empty array or one holding a single convertible value is a number.
        if not value:
            return 0.0
        if len(value) > 1 or isinstance(value[0], bool | dict):
            return math.nan
        return 0.0 if value[0] is None else js_to_number(value[0])
    return math.nan


def _string_to_number(text: str) -> float:
    text = js_trim(text)
    if not text:
        return 0.0
    if text in _INFINITIES:
        return _INFINITIES[text]
    radix = _RADIX_PREFIXES.get(text[:2].lower())
    if radix is not None:
        digits = text[2:]
        if not (digits.isascii() and digits.isalnum()):
            return math.nan
        try:
            number = int(digits, radix)
        except ValueError:
            return math.nan
        try:
            return float(number)
        except OverflowError:
            return math.inf
    if _DECIMAL.fullmatch(text) is None:
        return math.nan
    return float(text)
