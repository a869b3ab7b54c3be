"""What typing in the resume picker matches, and in what order, as Pi's session selector
searches (``session-selector-search.js``).

* ``re:PATTERN``: a regular expression, ignoring case; the earlier it matches, the better.
  A pattern that does not compile (or is empty) matches nothing.
* Otherwise words, each of which must match: a word matches fuzzily (Pi's ``fuzzyMatch``,
  see :mod:`ctxmodes.fuzzy_filter`), a ``"quoted phrase"`` as exact text (case and runs of
  whitespace ignored). A quote left open makes every word fuzzy, quotes and all.
* A session's text is its id, name, the text of all its user and assistant messages and its
  working directory, joined by spaces.
* In the recent order, what matches keeps the list's order; otherwise the best score first,
  ties the most recently active first.

Scores and positions are JavaScript's (UTF-16 code units), so that the order is Pi's."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from ctxmodes.fuzzy_filter import fuzzy_match
from ctxmodes.session.jsvalues import JS_WHITESPACE, js_length, js_trim

Session = TypeVar("Session")
TokenKind = Literal["fuzzy", "phrase"]

#: JavaScript's ``\s+``.
_WHITESPACE_RUN: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")
#: Pi weighs how far into the text a regular expression or a phrase matches by this much.
_POSITION_WEIGHT: Final = 0.1


@dataclass(frozen=True, slots=True)
class SearchToken:
    kind: TokenKind
    value: str


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query: ``regex`` set for ``re:``; ``error`` says why a pattern is refused
    (Pi then lists nothing)."""

    tokens: tuple[SearchToken, ...] = ()
    regex: re.Pattern[str] | None = None
    error: str | None = None
    is_regex: bool = False


def parse_search_query(query: str) -> SearchQuery:
    """Pi's ``parseSearchQuery``."""
    trimmed = js_trim(query)
    if trimmed.startswith("re:"):
        pattern = js_trim(trimmed[3:])
        if not pattern:
            return SearchQuery(is_regex=True, error="Empty regex")
        try:
            return SearchQuery(is_regex=True, regex=compile_js_pattern(pattern))
        except re.error as error:
            return SearchQuery(is_regex=True, error=str(error))
    tokens: list[SearchToken] = []
    buffer = ""
    in_quote = False

    def flush(kind: TokenKind) -> None:
        nonlocal buffer
        value = js_trim(buffer)
        buffer = ""
        if value:
            tokens.append(SearchToken(kind, value))

    for character in trimmed:
        if character == '"':
            flush("phrase" if in_quote else "fuzzy")
            in_quote = not in_quote
        elif not in_quote and character in JS_WHITESPACE:
            flush("fuzzy")
        else:
            buffer += character
    if in_quote:
        # An open quote: plain words, the quote characters kept in them, as Pi falls back.
        words = [word for word in _WHITESPACE_RUN.split(trimmed) if word]
        return SearchQuery(tokens=tuple(SearchToken("fuzzy", word) for word in words))
    flush("fuzzy")
    return SearchQuery(tokens=tuple(tokens))


def compile_js_pattern(pattern: str) -> re.Pattern[str]:
    """``new RegExp(pattern, "i")`` as Python's ``re`` reads it: JavaScript's named groups
    (``(?<name>…)``, ``\\k<name>``) written Python's way and ``$`` the end of the text only,
    as JavaScript's is without the ``m`` flag. Raises :class:`re.error` when it does not
    compile."""
    translated: list[str] = []
    index = 0
    in_class = False
    while index < len(pattern):
        character = pattern[index]
        if character == "\\" and index + 1 < len(pattern):
            named = re.match(r"\\k<([A-Za-z_$][\w$]*)>", pattern[index:])
            if named is not None and not in_class:
                translated.append(f"(?P={named[1]})")
                index += len(named[0])
                continue
            translated.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = character != "]"
        elif character == "[":
            in_class = True
        elif character == "$":
            character = r"\Z"
        elif pattern.startswith("(?<", index) and pattern[index + 3 : index + 4] not in ("=", "!"):
            character = "(?P<"
            index += 2
        translated.append(character)
        index += 1
    return re.compile("".join(translated), re.IGNORECASE)


def _normalized(text: str) -> str:
    """Pi's ``normalizeWhitespaceLower``."""
    return js_trim(_WHITESPACE_RUN.sub(" ", text.lower()))


def match_session(text: str, query: SearchQuery) -> float | None:
    """Pi's ``matchSession`` of a session's search ``text``: its score (lower is better),
    ``None`` when it does not match."""
    if query.is_regex:
        found = query.regex.search(text) if query.regex is not None else None
        if found is None:
            return None
        return js_length(text[: found.start()]) * _POSITION_WEIGHT
    total = 0.0
    normalized: str | None = None
    for token in query.tokens:
        if token.kind == "phrase":
            if normalized is None:
                normalized = _normalized(text)
            phrase = _normalized(token.value)
            if not phrase:
                continue
            at = normalized.find(phrase)
            if at < 0:
                return None
            total += js_length(normalized[:at]) * _POSITION_WEIGHT
            continue
        fuzzy = fuzzy_match(token.value, text)
        if not fuzzy.matches:
            return None
        total += fuzzy.score
    return total


def filter_and_sort(
    sessions: Sequence[Session],
    query: str,
    recent: bool,
    text_of: Callable[[Session], str],
    modified_of: Callable[[Session], int],
) -> list[Session]:
    """Pi's ``filterAndSortSessions``: the ``sessions`` that match ``query``; in their order
    when ``recent``, else best score first, ties by ``modified_of`` (milliseconds), latest
    first. Without a query, all of them; with a refused pattern, none."""
    if not js_trim(query):
        return list(sessions)
    parsed = parse_search_query(query)
    if parsed.error is not None:
        return []
    scored: list[tuple[float, int, Session]] = []
    for session in sessions:
        score = match_session(text_of(session), parsed)
        if score is not None:
            scored.append((score, -modified_of(session), session))
    if not recent:
        scored.sort(key=lambda item: item[:2])
    return [session for *_, session in scored]
