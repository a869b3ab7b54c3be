"""pi-tui's fuzzy filter (``fuzzyMatch`` and ``fuzzyFilter``), which Pi's ``--list-models``
search uses: a query's characters must appear in order in the text, case-insensitively;
runs, word starts and early matches score better (lower). A query of letters then digits
(``gpt4``), or digits then letters, that does not match is tried again swapped (``4gpt``)
at a small cost. A query of several words (separated by whitespace or ``/``) keeps the
items every word matches, best total first.

Positions, lengths and case are JavaScript's: the text is compared in UTF-16 code units,
lowered with ``toLowerCase`` (Python's ``str.lower`` maps the same), so that scores, and
with them the order, are pi-tui's to the last bit.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple, TypeVar

from ctxmodes.session.jsvalues import JS_WHITESPACE, js_trim

Item = TypeVar("Item")

#: The characters after which a match starts a word (pi-tui's ``/[\s\-_./:]/``).
_WORD_SEPARATORS: Final = frozenset(ord(character) for character in JS_WHITESPACE + "-_./:")
#: What separates the words of a query (pi-tui's ``/[\s/]+/``).
_QUERY_SEPARATORS: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}/]+")
_LETTERS_THEN_DIGITS: Final = re.compile(r"([a-z]+)([0-9]+)")
_DIGITS_THEN_LETTERS: Final = re.compile(r"([0-9]+)([a-z]+)")
#: What a swapped query's match costs over a direct one.
_SWAP_COST: Final = 5


class FuzzyMatch(NamedTuple):
    """Whether a query matches a text, and how well (lower is better; 0 without a match)."""

    matches: bool
    score: float


_NO_MATCH: Final = FuzzyMatch(False, 0)


def _code_units(text: str) -> bytes:
    """``text`` as JavaScript indexes it: UTF-16 code units (a lone surrogate is one), two
    bytes each, so that a unit is found by a byte search rather than a loop in Python (a
    session's text searched by the resume picker may be many megabytes)."""
    return text.encode("utf-16-le", "surrogatepass")


def _unit_at(text: bytes, position: int) -> int:
    return text[2 * position] | text[2 * position + 1] << 8


def _find_unit(text: bytes, unit: bytes, start: int) -> int:
    """The first position from ``start`` holding ``unit``; -1 when none does. A byte match
    across two units (at an odd offset) is not one."""
    found = text.find(unit, 2 * start)
    while found >= 0 and found % 2:
        found = text.find(unit, found + 1)
    return found // 2 if found >= 0 else -1


def _match_units(query: bytes, text: bytes) -> FuzzyMatch:
    """pi-tui's scoring of an already lowered query against an already lowered text: each
    query unit matched at its first position after the last match, as pi-tui's scan does."""
    if not query:
        return FuzzyMatch(True, 0)
    if len(query) > len(text):
        return _NO_MATCH
    score = 0.0
    last_match = -1
    run = 0
    for matched in range(len(query) // 2):
        position = _find_unit(text, query[2 * matched : 2 * matched + 2], last_match + 1)
        if position < 0:
            return _NO_MATCH
        starts_word = position == 0 or _unit_at(text, position - 1) in _WORD_SEPARATORS
        if last_match == position - 1:
            run += 1
            score -= run * 5
        else:
            run = 0
            if last_match >= 0:
                score += (position - last_match - 1) * 2
        if starts_word:
            score -= 10
        # The same operations in the same order as pi-tui, so that the float sums agree.
        score += position * 0.1
        last_match = position
    if query == text:
        score -= 100
    return FuzzyMatch(True, score)


def fuzzy_match(query: str, text: str) -> FuzzyMatch:
    """How well ``query`` matches ``text`` (pi-tui's ``fuzzyMatch``)."""
    lowered_query = query.lower()
    lowered_text = _code_units(text.lower())
    direct = _match_units(_code_units(lowered_query), lowered_text)
    if direct.matches:
        return direct
    swapped = _swapped(lowered_query)
    if swapped is None:
        return direct
    second = _match_units(_code_units(swapped), lowered_text)
    if not second.matches:
        return direct
    return FuzzyMatch(True, second.score + _SWAP_COST)


def _swapped(query: str) -> str | None:
    """``gpt4`` as ``4gpt``, ``4gpt`` as ``gpt4``; ``None`` for any other query."""
    for pattern in (_LETTERS_THEN_DIGITS, _DIGITS_THEN_LETTERS):
        parts = pattern.fullmatch(query)
        if parts is not None:
            return parts[2] + parts[1]
    return None


def fuzzy_filter(items: Sequence[Item], query: str, text_of: Callable[[Item], str]) -> list[Item]:
    """The ``items`` whose text (``text_of(item)``) every word of ``query`` matches, best
    total score first, ties in their given order (pi-tui's ``fuzzyFilter``); all of them,
    in their order, for a query without words."""
    words = [word for word in _QUERY_SEPARATORS.split(js_trim(query)) if word]
    if not words:
        return list(items)
    scored: list[tuple[float, Item]] = []
    for item in items:
        text = text_of(item)
        total = 0.0
        for word in words:
            found = fuzzy_match(word, text)
            if not found.matches:
                break
            total += found.score
        else:
            scored.append((total, item))
    scored.sort(key=lambda pair: pair[0])
    return [item for _, item in scored]
