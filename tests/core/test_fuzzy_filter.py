"""pi-tui's fuzzy filter, which Pi's ``--list-models`` search uses: which items a query keeps
and in which order, checked on cases where the order turns on one rule, and against
pi-tui's own ``fuzzyMatch`` and ``fuzzyFilter`` (run by node) on random queries and texts."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
from support.pi_oracle import require_node, require_pi_modules

from ctxmodes.fuzzy_filter import FuzzyMatch, fuzzy_filter, fuzzy_match


def keep(query: str, texts: list[str]) -> list[str]:
    return fuzzy_filter(texts, query, lambda text: text)


@pytest.mark.parametrize(
    ("query", "texts", "kept"),
    [
        # The text that is the query itself wins over one that only starts with it.
        ("gpt-4o", ["gpt-4o-mini", "gpt-4o"], ["gpt-4o", "gpt-4o-mini"]),
        # A run of matches beats the same characters spread out.
        ("son", ["s-o-n", "sonnet"], ["sonnet", "s-o-n"]),
        # A match at a word's start (after a space, -, _, ., / or :) beats one inside a word.
        ("m", ["xm", "x:m"], ["x:m", "xm"]),
        # Earlier is better, by a tenth per position.
        ("z", ["abz", "az"], ["az", "abz"]),
        # Letters then digits, unmatched as written, are tried swapped, at a cost of 5: the
        # direct match is first although it starts later.
        ("gpt4", ["4 gpt", "x gpt4"], ["x gpt4", "4 gpt"]),
        ("4gpt", ["gpt 4"], ["gpt 4"]),
        # Every word must match, in any order; / separates words as spaces do.
        ("4o gpt", ["gpt-4o", "gpt-5", "o4"], ["gpt-4o"]),
        ("openai/4o", ["openai gpt-4o", "anthropic gpt-4o"], ["openai gpt-4o"]),
        # Any case.
        ("SONNET", ["Claude-Sonnet-4"], ["Claude-Sonnet-4"]),
        # Equal scores keep the order given.
        ("a", ["ba", "ca", "da"], ["ba", "ca", "da"]),
        # A query of no words keeps everything, in order.
        (" / ", ["b", "a"], ["b", "a"]),
        ("zz", ["z", "a z z"], ["a z z"]),
    ],
)
def test_what_a_query_keeps_and_in_which_order(
    query: str, texts: list[str], kept: list[str]
) -> None:
    assert keep(query, texts) == kept


def test_scores_count_javascript_positions() -> None:
    # 😀 is two UTF-16 code units: the match after it is at position 3, as in pi-tui.
    assert fuzzy_match("b", "a😀b") == FuzzyMatch(True, 3 * 0.1)
    # As in pi-tui, a match at 0 counts as following one at -1: a run from the start.
    assert fuzzy_match("ab", "ab") == FuzzyMatch(True, -5 - 10 + -10 + 0.1 - 100)
    assert fuzzy_match("abc", "ab") == FuzzyMatch(False, 0)


#: Characters the random texts and queries are made of: cases, digits, word separators,
#: whitespace JavaScript knows and Python's ``isspace`` does not agree on, a letter whose
#: lower case is longer, one outside the Basic Multilingual Plane.
ALPHABET = "aAbBgGpPtT0145-_./: \u00a0\ufeff\x1cİ😀"


def _random_word(draw: random.Random, longest: int) -> str:
    return "".join(draw.choice(ALPHABET) for _ in range(draw.randint(1, longest)))


@pytest.mark.pi
def test_agrees_with_pi_tui_on_random_queries() -> None:
    modules = require_pi_modules()
    fuzzy = modules / "@earendil-works" / "pi-tui" / "dist" / "fuzzy.js"
    draw = random.Random(85)
    texts = [_random_word(draw, 14) for _ in range(60)]
    texts += ["openai gpt-4o", "anthropic claude-sonnet-4-5", "google gemini-2.5-pro"]
    queries = [_random_word(draw, 4) for _ in range(50)]
    queries += ["gpt4", "4gpt", "sonnet 45", "openai/4o", "Ab1", "1ab", "  ", ""]
    script = (
        "import { readFileSync } from 'node:fs';\n"
        f"const {{ fuzzyMatch, fuzzyFilter }} = await import({json.dumps(fuzzy.as_uri())});\n"
        "const { texts, queries } = JSON.parse(readFileSync(0, 'utf8'));\n"
        "process.stdout.write(JSON.stringify(queries.map((query) => ({\n"
        "  kept: fuzzyFilter(texts.map((_, i) => i), query, (i) => texts[i]),\n"
        "  scores: texts.map((text) => fuzzyMatch(query, text)),\n"
        "}))));"
    )
    done = subprocess.run(
        [require_node(), "--input-type=module", "-e", script],
        input=json.dumps({"texts": texts, "queries": queries}),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answers = json.loads(done.stdout)
    indices = list(range(len(texts)))
    kept_somewhere = 0
    for query, answer in zip(queries, answers, strict=True):
        ours = fuzzy_filter(indices, query, lambda i: texts[i])
        assert ours == answer["kept"], query
        kept_somewhere += 0 < len(ours) < len(texts)
        scores = [fuzzy_match(query, text) for text in texts]
        theirs = [FuzzyMatch(found["matches"], found["score"]) for found in answer["scores"]]
        assert scores == theirs, query
    assert kept_somewhere >= 20  # the random queries are not all trivial
