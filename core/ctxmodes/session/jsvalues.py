"""JavaScript value semantics that Pi's behaviour depends on."""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Final

__all__ = [
    "JS_WHITESPACE",
    "js_length",
    "js_locale_sort_key",
    "js_round",
    "js_slice",
    "js_sort_key",
    "js_to_fixed",
    "js_to_number",
    "js_trim",
    "js_trim_end",
    "js_truthy",
]

#: What JavaScript counts as whitespace: ``String.prototype.trim()`` strips these, and a
#: regular expression's ``\s`` matches them (WhiteSpace and LineTerminator code points).
JS_WHITESPACE: Final = (
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
    return text.strip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    """``text.trimEnd()`` with JavaScript's definition of whitespace."""
    return text.rstrip(JS_WHITESPACE)


# Strings. JavaScript counts, slices and (by default) sorts strings by UTF-16 code units;
# Python by code points. They differ for every character outside the Basic Multilingual
# Plane (emoji, many CJK extensions), which is one code point but two code units.


def js_length(text: str) -> int:
    """The JavaScript ``length`` of ``text``: its number of UTF-16 code units."""
    if text.isascii():
        return len(text)
    # surrogatepass: a lone surrogate read from a file is one code unit, as in JavaScript.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, start: int, stop: int | None = None) -> tuple[str, int, int]:
    """``text.slice(start, stop)`` in UTF-16 code units (non-negative bounds), and the
    bounds actually used.

    Unlike JavaScript, a bound that falls between the two halves of a surrogate pair moves
    back to the start of the pair, so a character is never cut in half (half a pair cannot
    be written as UTF-8) and a range that ends before a pair is continued from that pair;
    a range of one code unit that would so become empty takes the whole pair instead, so
    paging always moves on.
    """
    total = js_length(text)
    stop = total if stop is None else min(stop, total)
    start = min(start, stop)
    if text.isascii():
        return text[start:stop], start, stop
    encoded = text.encode("utf-16-le", "surrogatepass")
    asked = stop
    start, stop = _pair_start(encoded, start), _pair_start(encoded, stop)
    if stop <= start < asked:
        stop = min(start + 2, total)
    piece = encoded[2 * start : 2 * stop].decode("utf-16-le", "surrogatepass")
    return piece, start, stop


def _pair_start(encoded: bytes, unit: int) -> int:
    """``unit``, or one less when it is the low half of a surrogate pair."""
    if 0 < unit < len(encoded) // 2:
        high = int.from_bytes(encoded[2 * unit - 2 : 2 * unit], "little")
        low = int.from_bytes(encoded[2 * unit : 2 * unit + 2], "little")
        if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
            return unit - 1
    return unit


def js_sort_key(text: str) -> bytes:
    """Sort key giving JavaScript's default ``Array.prototype.sort`` order for strings."""
    # Big-endian UTF-16 bytes compare exactly like sequences of UTF-16 code units.
    return text.encode("utf-16-be", "surrogatepass")


def js_locale_sort_key(text: str) -> bytes:
    """Sort key giving the order of ``a.localeCompare(b)`` (ICU's root collation, which
    node's default ``en`` locale uses)."""
    return _root_collator().getSortKey(text)  # type: ignore[no-any-return]


@functools.cache
def _root_collator() -> Any:
    import icu  # ICU, as node's Intl; imported on first use (it is large)

    return icu.Collator.createInstance(icu.Locale.getRoot())


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


def js_round(value: float) -> int:
    """``Math.round(value)``: a tie goes up (Python's ``round`` goes to the even integer)."""
    return math.floor(value + 0.5)


def js_to_fixed(value: float, digits: int) -> str:
    """``value.toFixed(digits)`` for a finite ``value``: the double's exact value rounded, a
    tie going up (Python's formatting goes to even: 1.25 is ``1.3`` here, ``1.2`` there)."""
    # Imported here: decimal costs some 3 ms, and most commands never format a number.
    from decimal import ROUND_HALF_UP, Decimal

    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
