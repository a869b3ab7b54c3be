"""Markdown in the export: plain sentences take a short way past the parser, and must come
out exactly as the parser renders them."""

from __future__ import annotations

import random

import pytest

from ctxmodes.export import markdown
from ctxmodes.export.markdown import render_markdown

#: What plain sentences are made of.
PLAIN = [*"abcXYZ019 .,;:?'\"()/-+=#%$@^{}", "é", "中", "🎉", "\na", "\nZ"]
#: Characters and runs that start or change Markdown, and white space of every kind.
SPECIAL = [
    *"\\`*_~[]!<>&|\t\r\x00\x0b\x0c\x1c\x85\xa0\u2003\u2028\u3000\ufeff",
    *["\n", "  \n", " \n", "\n\n", "\n1. ", "\n- ", "\n> ", "\n    ", "\n===", "\n---", "&amp;"],
]

EDGE_CASES = [
    "plain words",
    "trailing spaces   ",
    "two\nlines",
    "soft break \nnext",
    "hard break  \nnext",
    'say "hi", it\'s (fine) / ok: yes; no? 100% #1 @me a=b {x} ^',
    "A) not a list",
    "1. a list",
    "10) a list",
    "# heading",
    "underlined\n===",
    "underlined\n---",
    " leading space",
    "    indented code",
    "tab\there",
    "a\n\nb",
    "ends with a newline\n",
    "x & y",
    "a < b",
    "a *b* c",
    "snake_case",
    "über ünïcode 中文 🎉",
    "nbsp at the end\u00a0",
    "line separator\u2028inside",
    "",
]


def parsed(text: str) -> str:
    return markdown._parser().render(text)


@pytest.mark.parametrize("text", EDGE_CASES)
def test_plain_text_renders_as_the_parser_renders_it(text):
    assert render_markdown(text) == parsed(text)


@pytest.mark.slow  # thousands of seeded texts
def test_random_texts_render_as_the_parser_renders_them():
    rng = random.Random(20260101)
    plain = 0
    for _ in range(4000):
        # Plain, plain with now and then a character or run that is not, or anything.
        pool = rng.choice([PLAIN, PLAIN * 8 + SPECIAL, PLAIN + SPECIAL])
        text = "".join(rng.choice(pool) for _ in range(rng.randint(1, 40)))
        if rng.random() < 0.7:
            text = rng.choice("aQz") + text
        plain += bool(markdown._PLAIN.fullmatch(text))
        assert render_markdown(text) == parsed(text), repr(text)
    assert plain > 1000  # the short way was taken often enough to be checked


def test_markup_in_a_message_is_text():
    html = render_markdown('<script>alert("x")</script> & [a](javascript:alert(1))')
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert 'href="javascript' not in html
