"""JavaScript semantics that Pi's numbers and texts depend on.

Strings: Pi's token estimates (``chars / 4``) and its tool-result truncation count
``string.length`` (UTF-16 code units) and it sorts file names by code units; Python counts and
orders code points, so characters outside the Basic Multilingual Plane (emoji, many CJK
extensions) would make our results drift from Pi's.

Objects: ``Object.entries`` lists integer-like keys first, in ascending order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxmodes.session.jsvalues import js_length, js_sort_key

__all__ = ["js_entries", "js_length", "js_prefix", "js_sort_key"]


def js_prefix(text: str, units: int) -> str:
    """``text.slice(0, units)`` in JavaScript; may end in half a surrogate pair, as there."""
    if text.isascii():
        return text[:units]
    encoded = text.encode("utf-16-le", "surrogatepass")
    return encoded[: 2 * units].decode("utf-16-le", "surrogatepass")


def _is_array_index(key: str) -> bool:
    if not key.isascii() or not key.isdigit() or (len(key) > 1 and key[0] == "0"):
        return False
    return int(key) <= 2**32 - 2


def js_entries(obj: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``Object.entries(obj)`` for a parsed JSON object: array-index keys first, ascending."""
    items = list(obj.items())
    index_items = [item for item in items if _is_array_index(item[0])]
    if not index_items:
        return items
    index_items.sort(key=lambda item: int(item[0]))
    return index_items + [item for item in items if not _is_array_index(item[0])]
