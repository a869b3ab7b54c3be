"""JavaScript value semantics that Pi's behaviour depends on."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["js_trim", "js_truthy"]

# String.prototype.trim() strips WhiteSpace and LineTerminator code points.
_JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


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
