"""The resume picker's search, as Pi's session selector searches: fuzzy words, ``"exact
phrases"`` and ``re:`` patterns, in Pi's order. Pi's own ``filterAndSortSessions`` judges a
range of queries over the same sessions (``pi_session_search.mjs``). A ``re:`` pattern that
backtracks without end in Pi is cut short by the search's time budget, and any other
pattern finds what Python's ``re`` finds."""

from __future__ import annotations

import json
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.pi_oracle import run_pi_script

from ctxmodes.tui.session_search import (
    MAX_PATTERN_STEPS,
    SearchBudget,
    SearchToken,
    compile_js_pattern,
    filter_and_sort,
    match_session,
    parse_search_query,
)

SCRIPT = Path(__file__).parents[2] / "support" / "pi_session_search.mjs"


@dataclass(frozen=True)
class Session:
    id: str
    name: str | None
    text: str
    cwd: str
    modified: int

    def search_text(self) -> str:
        return f"{self.id} {self.name or ''} {self.text} {self.cwd}"


SESSIONS = [
    Session("s1", "parser work", "fix the parser bug The parser now handles quotes", "/p", 5000),
    Session("s2", None, "write docs for the CLI  Added\ta usage section", "/p", 9000),
    Session("s3", None, "Refactor   the\n\nparser entirely", "/p", 7000),
    Session("s4", "logs", "🙂🙂 parse logs with regex, then parse again", "/home/u/other", 7000),
    Session("s5", None, "deploy gpt4 to staging", "/srv/deploy", 1000),
    Session("s6", "  ", "The Parser Is Fine", "/p", 3000),
]

QUERIES = [
    "",
    "   ",
    "parser",
    "PARSER",
    "prs",
    "the parser",
    '"the parser"',
    '"THE   parser"',
    '"the parser" bug',
    'fix "the parser" quotes',
    '"the parser',
    '"',
    '""',
    'a"b c"d',
    "re:pars(e|ing)",
    "re:^s[0-9]",
    "re:PARSE",
    "re:regex$",
    "re:logs(?<x>\\s)",
    "re:(",
    "re:[a-",
    "re:",
    "re:   ",
    "re:a{2}",
    "re:*",
    "re:\\d{4}",
    "re:[^a-z ]+s",
    "4gpt",
    "gpt4",
    "deploy staging",
    "/p",
    "zzz",
    "parse 🙂",
]


def ours(query: str, *, recent: bool) -> list[str]:
    found = filter_and_sort(
        SESSIONS, query, recent, Session.search_text, lambda session: session.modified
    )
    assert found.too_slow == 0
    return [session.id for session in found.sessions]


@pytest.mark.pi
def test_every_query_lists_what_pi_s_search_lists_in_pi_s_order() -> None:
    request = {
        "sessions": [
            {
                "id": session.id,
                "name": session.name,
                "allMessagesText": session.text,
                "cwd": session.cwd,
                "modified": session.modified,
            }
            for session in SESSIONS
        ],
        "queries": QUERIES,
    }
    answer = run_pi_script(SCRIPT, json.dumps(request))
    for pis in answer["results"]:
        query = pis["query"]
        assert (parse_search_query(query).error is not None) == pis["refused"], query
        assert ours(query, recent=True) == pis["recent"], query
        assert ours(query, recent=False) == pis["relevance"], query


def test_words_are_fuzzy_and_quoted_text_is_one_exact_phrase() -> None:
    parsed = parse_search_query('  fix "the  parser" bug ')
    assert parsed.tokens == (
        SearchToken("fuzzy", "fix"),
        SearchToken("phrase", "the  parser"),
        SearchToken("fuzzy", "bug"),
    )
    # The phrase is found across a run of whitespace, ignoring case; fuzzily it would
    # match far more.
    assert match_session("Refactor   THE\n\nparser", parsed) is None  # no "fix" in it
    assert match_session("fix: Refactor   THE\n\nparser; bug", parsed) is not None
    assert ours('"the parser"', recent=True) == ["s1", "s3", "s6"]
    assert ours("tpr", recent=True) != []  # fuzzy: t…p…r anywhere in order


def test_an_open_quote_makes_every_word_fuzzy_quote_and_all() -> None:
    assert parse_search_query('"the parser').tokens == (
        SearchToken("fuzzy", '"the'),
        SearchToken("fuzzy", "parser"),
    )


def test_re_matches_a_pattern_ignoring_case_and_scores_its_position() -> None:
    parsed = parse_search_query("re:PARSE (logs|again)")
    assert parsed.error is None
    # Scored by where the match starts, in UTF-16 units: each emoji counts two.
    assert match_session("🙂 parse logs", parsed) == pytest.approx(0.3)
    assert match_session("nothing here", parsed) is None


def test_an_invalid_or_empty_pattern_lists_nothing() -> None:
    for query in ("re:(", "re:[a-", "re:*"):
        assert parse_search_query(query).error, query
        assert ours(query, recent=True) == [], query
    assert parse_search_query("re:  ").error == "Empty regex"
    assert ours("re:", recent=False) == []


def test_javascript_s_named_groups_and_end_of_text_are_read_as_javascript_reads_them() -> None:
    assert compile_js_pattern(r"(?<word>a)\k<word>").search("xAa") is not None
    assert compile_js_pattern(r"(?<=a)b").search("ab") is not None  # a lookbehind stays one
    assert compile_js_pattern("end$").search("the end\n") is None  # not before a newline
    assert compile_js_pattern("[$]").search("costs $5") is not None


def test_recent_keeps_the_order_and_fuzzy_puts_the_best_first_ties_latest_first() -> None:
    assert ours("parser", recent=True) == ["s1", "s3", "s4", "s6"]
    relevance = ours("parser", recent=False)
    assert sorted(relevance) == ["s1", "s3", "s4", "s6"]
    tied = [
        Session("old", None, "same", "/p", 1),
        Session("new", None, "same", "/p", 2),
    ]
    found = filter_and_sort(tied, "same", False, lambda s: "same", lambda s: s.modified)
    assert [session.id for session in found.sessions] == ["new", "old"]


def test_without_a_query_every_session_is_listed_in_its_order() -> None:
    assert ours("  ", recent=False) == [session.id for session in SESSIONS]


def ids(sessions: list[Session], query: str, budget: SearchBudget | None = None):
    found = filter_and_sort(
        sessions,
        query,
        True,
        Session.search_text,
        lambda session: session.modified,
        *(() if budget is None else (budget,)),
    )
    return [session.id for session in found.sessions], found


@pytest.mark.pi
def test_a_lower_case_i_is_no_dotless_i_nor_an_upper_case_i_a_dotted_one_as_in_pi() -> None:
    sessions = [
        Session("t1", None, "Diyarbakir", "/p", 4),
        Session("t2", None, "D\u0131yarbak\u0131r", "/p", 3),  # dotless
        Session("t3", None, "\u0130zmir", "/p", 2),  # dotted capital
        Session("t4", None, "Izmir", "/p", 1),
    ]
    request = {
        "sessions": [
            {"id": s.id, "name": None, "allMessagesText": s.text, "cwd": s.cwd, "modified": 1}
            for s in sessions
        ],
        "queries": ["re:diyarbakir", "re:IZMIR"],
    }
    for pis in run_pi_script(SCRIPT, json.dumps(request))["results"]:
        assert ids(sessions, pis["query"])[0] == pis["recent"], pis["query"]


#: A run of letters the pattern below backtracks over: each letter more doubles its time,
#: seconds at 24, as ``(a+)+b`` does in Pi's JavaScript and in Python's ``re`` (``regex``
#: sees through that one, but not through this).
BACKTRACKED = "a" * 24
BACKTRACKING = "re:(a|a)+b"


def test_a_backtracking_pattern_takes_its_budget_the_time_of_an_ordinary_search() -> None:
    # Long texts, which an ordinary pattern reads to the end, each after the letters.
    filler = "lorem ipsum dolor " * 10_000
    sessions = [Session(f"s{n}", None, f"{BACKTRACKED} {filler}", "/p", n) for n in range(20)]
    unlimited = SearchBudget(per_session=600, total=600)
    started = time.perf_counter()
    listed, found = ids(sessions, r"re:ipsum\s+dolor\s+sit", unlimited)
    ordinary = time.perf_counter() - started
    assert (listed, found.too_slow) == ([], 0)
    # A budget of the ordinary search's time, a quarter of it in each session.
    budget = SearchBudget(per_session=ordinary / 4, total=ordinary)
    started = time.perf_counter()
    listed, found = ids(sessions, BACKTRACKING, budget)
    backtracking = time.perf_counter() - started
    assert listed == []
    assert found.too_slow == len(sessions)  # none searched to the end: all left out
    # Unbounded, it would take seconds in each session.
    assert backtracking < 3 * ordinary


def test_a_session_the_pattern_is_too_slow_in_is_left_out_and_the_others_are_searched() -> None:
    sessions = [
        Session("slow", None, BACKTRACKED, "/p", 3),
        Session("one", None, "one ab", "/p", 2),
        Session("two", None, "two aab", "/p", 1),
    ]
    # A total the machine's load cannot spend: what is tested is the one session's limit.
    listed, found = ids(sessions, BACKTRACKING, SearchBudget(per_session=0.2, total=600))
    assert listed == ["one", "two"]
    assert found.too_slow == 1


def test_once_the_total_budget_is_spent_the_sessions_left_are_not_searched() -> None:
    sessions = [Session(f"s{n}", None, BACKTRACKED, "/p", n) for n in range(6)]
    sessions.append(Session("last", None, "ab", "/p", 0))
    # Each backtracking session takes the whole budget of one: the total allows two.
    listed, found = ids(sessions, BACKTRACKING, SearchBudget(per_session=0.02, total=0.04))
    assert listed == []  # the last one would match, but is never reached
    assert found.too_slow == len(sessions)


def test_a_pattern_quick_in_every_session_searches_them_all_whatever_their_number() -> None:
    """Only the sessions a pattern is slow in spend the total: an ordinary pattern over
    more text than the total would let it read is not cut short."""
    filler = "lorem ipsum dolor sit amet " * 400
    sessions = [Session(f"s{n}", None, f"{filler} match{n}", "/p", n) for n in range(300)]
    started = time.perf_counter()
    listed, found = ids(sessions, "re:match\\d+", SearchBudget(per_session=0.2, total=600))
    took = time.perf_counter() - started
    # A total far below what the whole search takes: it is never spent.
    listed, found = ids(sessions, "re:match\\d+", SearchBudget(per_session=0.2, total=took / 10))
    assert found.too_slow == 0
    assert len(listed) == len(sessions)


def test_a_pattern_whose_repeats_would_take_memory_without_bound_is_refused() -> None:
    # Compiled, nested counts multiply: a million steps, a billion with a third level.
    for pattern in ("(a{1000}){1000}", "((a{1000}){1000}){1000}", "(?:ab){100000}"):
        parsed = parse_search_query(f"re:{pattern}")
        assert parsed.too_large, pattern
        listed, found = ids([Session("s", None, "a" * 10, "/p", 1)], f"re:{pattern}")
        assert (listed, found.too_large) == ([], True)
    # Long counted runs within the limit, and repeats without a minimum, are searched.
    assert parse_search_query(f"re:a{{{MAX_PATTERN_STEPS - 10}}}").error is None
    assert parse_search_query("re:(?:x{0,1000}){0,1000}|a+").error is None
    # A pattern Pi refuses is refused as such, whatever its size.
    assert not parse_search_query("re:((a{1000}){1000}){1000}(").too_large


#: Pieces of patterns: plain and escaped characters, classes, anchors, and the syntax the
#: ``regex`` package reads otherwise than ``re`` (fuzzy ``{e<=1}``, ``[[:alpha:]]``, ``{s``).
PIECES = [
    *"abAsKk1 -./{}]x^",
    "\u00e9",
    "\u00df",
    "\u017f",
    "\u212a",
    "[ab]",
    "[^a]",
    "[a-z]",
    "[\\d]",
    "[\\w-]",
    "[[]",
    "[[:alpha:]]",
    "[{]",
    "\\d",
    "\\w",
    "\\s",
    "\\b",
    "\\B",
    "\\W",
    "\\.",
    "\\x41",
    "\\1",
    "\\A",
    "\\Z",
    "\\p{L}",
    "\\N{LATIN SMALL LETTER A}",
    "{s",
    "{e<=1}",
    "{,}",
    "(?#c{1})",
]
QUANTIFIERS = ["", "*", "+", "?", "{2}", "{1,3}", "{2,}", "{,2}", "*?", "+?", "++", "{1,2", "{}"]
GROUPS = ["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?P<n>", "(?|"]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 3 and draw(st.integers(0, 5)) == 0:
            inner = draw(patterns(depth + 1))
            if draw(st.booleans()):
                inner += "|" + draw(patterns(depth + 1))
            parts.append(draw(st.sampled_from(GROUPS)) + inner + ")")
        else:
            parts.append(draw(st.sampled_from(PIECES)))
        parts[-1] += draw(st.sampled_from(QUANTIFIERS))
    return "".join(parts)


#: Text without Turkish's dotless and dotted i, which ``re`` takes for an i more often than
#: ``regex`` does (and Pi never does).
TEXTS = st.text(
    alphabet=st.sampled_from([*"abAsSKk1 -./{}[]:x^$()\n\t", "\u00e9", "\u00df", "\u017f"]),
    min_size=1,  # a session's text is never empty
    max_size=16,
)


@pytest.mark.slow  # 300 patterns, each compiled by both
@settings(max_examples=300, derandomize=True, deadline=None)
@given(patterns(), st.lists(TEXTS, min_size=1, max_size=4))
def test_a_pattern_without_javascript_s_own_syntax_finds_what_python_s_re_finds(
    pattern: str, texts: list[str]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # re's "possible nested set"
        try:
            expected = re.compile(pattern, re.IGNORECASE)
        except re.error:
            with pytest.raises(re.error):
                compile_js_pattern(pattern)
            return
    compiled = compile_js_pattern(pattern)
    for text in texts:
        found, wanted = compiled.search(text), expected.search(text)
        assert (found and found.start()) == (wanted and wanted.start()), (pattern, text)
