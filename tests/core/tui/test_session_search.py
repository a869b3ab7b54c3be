"""The resume picker's search, as Pi's session selector searches: fuzzy words, ``"exact
phrases"`` and ``re:`` patterns, in Pi's order. Pi's own ``filterAndSortSessions`` judges a
range of queries over the same sessions (``pi_session_search.mjs``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.tui.session_search import (
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
    return [session.id for session in found]


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
    assert [session.id for session in found] == ["new", "old"]


def test_without_a_query_every_session_is_listed_in_its_order() -> None:
    assert ours("  ", recent=False) == [session.id for session in SESSIONS]
