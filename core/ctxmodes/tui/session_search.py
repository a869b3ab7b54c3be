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

Scores and positions are JavaScript's (UTF-16 code units), so that the order is Pi's.

A ``re:`` pattern is searched with a time limit, where Pi's search runs as long as the
pattern takes (a pattern that backtracks, such as ``(a|a)+b`` over a long run of ``a``,
takes longer with each letter): each session's text gets :attr:`SearchBudget.per_session`
seconds, and once the sessions the pattern is slow in (a tenth of that or more each) have
taken :attr:`SearchBudget.total` of one key's search, the sessions left are not searched.
A pattern that is quick in every session searches them all, however many there are, as
Pi's does. A session not searched to the end (or not reached) counts as not matching, and
:attr:`SearchResult.too_slow` counts them, for the picker to say so. A pattern whose counted
repeats would make the matcher build more than :data:`MAX_PATTERN_STEPS` steps is refused
(:attr:`SearchQuery.too_large`), as compiling it would take memory without bound.

A pattern is accepted or refused as Python's ``re`` reads it (:func:`compile_js_pattern`),
and matched with the ``regex`` package, whose matching takes a timeout; the two read every
pattern ``re`` accepts alike, once ``regex``'s own syntax (fuzzy ``{e<=1}``, ``[[:alpha:]]``) is
written as the literal text ``re`` and JavaScript read there. Ignoring case,
``regex`` takes Turkish's dotless i (U+0131) for no ``i`` and its dotted capital I (U+0130)
for no ``I``, as JavaScript does not, where ``re`` did (both still take the dotless i for
an ``I`` and the dotted I for an ``i``, which JavaScript does not)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Generic, Literal, TypeVar

import regex

from ctxmodes.fuzzy_filter import fuzzy_match
from ctxmodes.session.jsvalues import JS_WHITESPACE, js_length, js_trim

Session = TypeVar("Session")
TokenKind = Literal["fuzzy", "phrase"]

#: JavaScript's ``\s+``.
_WHITESPACE_RUN: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")
#: Pi weighs how far into the text a regular expression or a phrase matches by this much.
_POSITION_WEIGHT: Final = 0.1
#: The most steps a ``re:`` pattern may make the matcher build. ``regex`` builds a repeat's
#: body once for each of its minimum count, so nested counts multiply: ``(a{1000}){1000}``
#: is a million steps, some 270 MB and a third of a second to compile, and a third level
#: more than any memory. Ordinary patterns build a few dozen.
MAX_PATTERN_STEPS: Final = 20_000
#: Why such a pattern is refused.
TOO_LARGE: Final = f"Pattern too large: its repeats come to over {MAX_PATTERN_STEPS:,} steps"
#: A repeat written with braces, as ``re`` reads one (``{3}``, ``{3,}``, ``{3,5}``, ``{,5}``):
#: any other ``{`` is literal text.
_BRACES: Final = re.compile(r"\{(\d*)(?:,(\d*))?\}")
#: JavaScript's back reference to a named group.
_NAMED_REFERENCE: Final = re.compile(r"\\k<([A-Za-z_$][\w$]*)>")


@dataclass(frozen=True, slots=True)
class SearchBudget:
    """How long a ``re:`` pattern may search, in seconds: in one session's text, and in the
    sessions it is slow in (``per_session / 10`` or more each) at one key."""

    per_session: float = 0.05
    total: float = 0.25


#: The budget of the resume picker's search: a pattern slow in many sessions gives up within
#: about a quarter of a second, and a single session's text never takes all of it.
SEARCH_BUDGET: Final = SearchBudget()


class PatternTooLarge(ValueError):
    """A pattern whose counted repeats would build more than :data:`MAX_PATTERN_STEPS`."""


@dataclass(frozen=True, slots=True)
class SearchToken:
    kind: TokenKind
    value: str


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query: ``regex`` set for ``re:``; ``error`` says why a pattern is refused
    (Pi then lists nothing), ``too_large`` when it is refused for its size, which Pi would
    search."""

    tokens: tuple[SearchToken, ...] = ()
    regex: regex.Pattern[str] | None = None
    error: str | None = None
    is_regex: bool = False
    too_large: bool = False


@dataclass(frozen=True, slots=True)
class SearchResult(Generic[Session]):
    """The sessions a query lists, in order, and how many a ``re:`` pattern could not be
    searched in within its :class:`SearchBudget` (left out, as not matching)."""

    sessions: list[Session]
    too_slow: int = 0
    #: The pattern was refused for its size (see :data:`MAX_PATTERN_STEPS`).
    too_large: bool = False


def parse_search_query(query: str) -> SearchQuery:
    """Pi's ``parseSearchQuery``."""
    trimmed = js_trim(query)
    if trimmed.startswith("re:"):
        pattern = js_trim(trimmed[3:])
        if not pattern:
            return SearchQuery(is_regex=True, error="Empty regex")
        try:
            return SearchQuery(is_regex=True, regex=compile_js_pattern(pattern))
        except PatternTooLarge as error:
            return SearchQuery(is_regex=True, error=str(error), too_large=True)
        except (re.error, regex.error) as error:
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


def compile_js_pattern(pattern: str) -> regex.Pattern[str]:
    """``new RegExp(pattern, "i")`` as Python's ``re`` reads it, compiled by ``regex`` to be
    matched with a timeout: JavaScript's named groups (``(?<name>…)``, ``\\k<name>``) written
    Python's way and ``$`` the end of the text only, as JavaScript's is without the ``m``
    flag. A ``{`` that starts no repeat and a ``[`` inside a class are written as the literal
    characters they are to ``re`` (and to JavaScript), which ``regex`` would read as a fuzzy
    match or a POSIX class.

    :raises re.error: ``re`` does not compile it (its message says why).
    :raises PatternTooLarge: its repeats would build more than :data:`MAX_PATTERN_STEPS`."""
    translated, steps = _translate(pattern)
    re.compile(translated, re.IGNORECASE)  # refused as before, with re's reasons
    if steps > MAX_PATTERN_STEPS:
        raise PatternTooLarge(TOO_LARGE)
    # Not kept in regex's cache of 500 patterns: each key typed makes another.
    return regex.compile(translated, regex.IGNORECASE | regex.VERSION0, cache_pattern=False)


def _translate(pattern: str) -> tuple[str, int]:
    """``pattern`` written for ``re`` and ``regex`` (see :func:`compile_js_pattern`), and
    about how many steps ``regex`` builds for it: one a character, class or escape, a
    group's steps and one more, each repeat's body once more for each of its minimum."""
    translated: list[str] = []
    # Per open group: its steps so far, and those of its last item (which a repeat repeats).
    groups: list[list[int]] = [[0, 0]]
    index = 0
    in_class = False
    # The last item is a repeat: a ``?`` or ``+`` after it makes it lazy or possessive.
    repeated = False

    def item(steps: int) -> None:
        groups[-1][0] += steps
        groups[-1][1] = steps

    def repeat(minimum: int) -> None:
        group = groups[-1]
        group[0] += group[1] * minimum
        group[1] *= minimum + 1

    while index < len(pattern):
        character = pattern[index]
        if character == "\\" and index + 1 < len(pattern):
            named = None if in_class else _NAMED_REFERENCE.match(pattern, index)
            if named is not None:
                escape = f"(?P={named[1]})"
                index += len(named[0])
            elif pattern.startswith("N{", index + 1) and pattern.find("}", index) > 0:
                # A character by its Unicode name, as re reads one: not a repeat.
                end = pattern.index("}", index) + 1
                escape = pattern[index:end]
                index = end
            else:
                escape = pattern[index : index + 2]
                index += 2
            translated.append(escape)
            if not in_class:
                item(1)
                repeated = False
            continue
        index += 1
        if in_class:
            in_class = character != "]"
            translated.append("\\[" if character == "[" else character)
            continue
        was_repeated, repeated = repeated, False
        if character == "{":
            braces = _BRACES.match(pattern, index - 1)
            if braces is not None and braces[0] != "{}":
                translated.append(braces[0])
                index += len(braces[0]) - 1
                repeat(int(braces[1] or 0))
                repeated = True
                continue
            character = "\\{"
            item(1)
        elif character in "*+?":
            if not was_repeated:
                repeat(1 if character == "+" else 0)
                repeated = True
        elif character == "|":
            groups[-1][1] = 0
        elif character == "(":
            if pattern.startswith("?<", index) and pattern[index + 2 : index + 3] not in ("=", "!"):
                character = "(?P<"
                index += 2
            groups.append([0, 0])
        elif character == ")":
            if len(groups) > 1:
                item(groups.pop()[0] + 1)
        else:
            if character == "[":
                in_class = True
            elif character == "$":
                character = r"\Z"
            item(1)
        translated.append(character)
    return "".join(translated), sum(steps for steps, _ in groups)


def _normalized(text: str) -> str:
    """Pi's ``normalizeWhitespaceLower``."""
    return js_trim(_WHITESPACE_RUN.sub(" ", text.lower()))


def match_session(text: str, query: SearchQuery, timeout: float | None = None) -> float | None:
    """Pi's ``matchSession`` of a session's search ``text``: its score (lower is better),
    ``None`` when it does not match.

    :param timeout: the seconds a ``re:`` pattern may take (``None``: as long as it takes).
    :raises TimeoutError: the pattern took longer."""
    if query.is_regex:
        found = query.regex.search(text, timeout=timeout) if query.regex is not None else None
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
    budget: SearchBudget = SEARCH_BUDGET,
) -> SearchResult[Session]:
    """Pi's ``filterAndSortSessions``: the ``sessions`` that match ``query``; in their order
    when ``recent``, else best score first, ties by ``modified_of`` (milliseconds), latest
    first. Without a query, all of them; with a refused pattern, none. A ``re:`` pattern
    searches within ``budget``: a session it does not finish in, or does not reach, is left
    out and counted in :attr:`SearchResult.too_slow`."""
    if not js_trim(query):
        return SearchResult(list(sessions))
    parsed = parse_search_query(query)
    if parsed.error is not None:
        return SearchResult([], too_large=parsed.too_large)
    # Only slow sessions spend the total: a quick pattern searches every session.
    left = budget.total
    slow = budget.per_session / 10
    too_slow = 0
    scored: list[tuple[float, int, Session]] = []
    for session in sessions:
        timeout = None
        if parsed.is_regex:
            timeout = min(budget.per_session, left)
            if timeout <= 0:
                too_slow += 1
                continue
        started = time.monotonic()
        try:
            score = match_session(text_of(session), parsed, timeout)
        except TimeoutError:
            too_slow += 1
            score = None
        took = time.monotonic() - started
        if parsed.is_regex and took >= slow:
            left -= took
        if score is not None:
            scored.append((score, -modified_of(session), session))
    if not recent:
        scored.sort(key=lambda item: item[:2])
    return SearchResult([session for *_, session in scored], too_slow)
