"""A reply's Markdown is laid out as Pi lays it out: the real pi-tui ``Markdown`` judges
written replies and random ones (paragraphs with line breaks, headings, tight, loose,
ordered and nested lists, code fences, quotes, rules and tables, with wide characters,
long words and links) at many widths; and the styles the terminal adds to those lines."""

from __future__ import annotations

import difflib
import itertools
import json
import random
from pathlib import Path

import pytest
from rich.text import Text
from support.pi_oracle import run_pi_script

from ctxmodes.tui.markdown_lines import CODE_BLOCK, LINK_URL, markdown_lines, wrap

SCRIPT = Path(__file__).parents[2] / "support" / "pi_markdown.mjs"

WRITTEN = [
    "Here is a **summary**:\n\n- one\n- two\n\n```python\nprint('hi')\n```\n\nDone.",
    "para\n- a\n- b\n# H1\ntext\n## H2\n### H3\n\n> quote *it*\n> more\n\n---\nend",
    "line one\nline two  \nhard [link](http://x.y) and http://a.b and `code`",
    "| a | bb |\n|---|---|\n| 1 | long cell text here that wraps |\n\nafter",
    "1. first\n2. second\n   - nested\n   - more\n3. third\n\n- [ ] task\n- [x] done",
    "- a\n\n- b\n\ntext after",
    "averyveryveryverylongwordthatcannotfitintothewidthatall and more",
    "- c\n\n  p2\n\n  ```\n  code here\n  ```\n- d",
    "> a\n>\n> b\n> - x\n> - y\n\nz",
    "# Title\n\nSome text with a [link](https://example.com/a/very/long/path/that/wraps) inside,"
    " and **bold _nested_ text** that ~~goes~~ on and on for a while.",
    "漢字のテキストは空白なしで折り返されます。これは長い文です。",
    "```\nunclosed code\nmore",
    "```js\nlet a = 1;\n``",
    "```js\nlet a = 1;\n``\n",
    "~~~~\ncode\n~~~",
    "````\ncode\n```",
    "| Column one | Column two | Column three |\n| --- | :---: | ---: |\n"
    "| a much longer cell here | b | c c c c c c c c c c c c |\n| x | y | z |",
    "3. three\n4. four\n\n* star\n+ plus",
    "    indented code\n    more\n\ntext",
    "Setext\n======\n\nSub\n---\ntext",
    "a\n\n\n\nb",
    "![alt text](img.png) and <https://auto.link> and <me@x.com> and [é](https://x.org/é)",
    "Tabs\tinside\ta line, and\n\tcode after a tab",
    "Run this:\n    make test\n  then `this span` and\n      more",
]

WORDS = [
    "the", "model", "writes", "context", "window", "a", "notes", "session", "tree", "fix",
    "src/app/main.py", "ctxmodes", "supercalifragilisticexpialidocious-and-more", "漢字",
    "テスト", "é", "naïve", "emoji🙂", "x", "42", "(parens)", "well,", "done.",
]  # fmt: skip


def _words(rng: random.Random, most: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, most)))


def _inline(rng: random.Random, most: int = 12) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        text = _words(rng, max(1, most // 3))
        shapes = [
            f"**{text}**", f"*{text}*", f"`{text}`", f"~~{text}~~",
            f"[{text}](https://example.com/{rng.choice(WORDS)})",
        ]  # fmt: skip
        parts.append(rng.choice([*shapes, text, text, text]))
    return " ".join(parts)


def _items(rng: random.Random, depth: int) -> list[str]:
    ordered = rng.random() < 0.4
    # Under an item's text only a list numbered from 1 starts in CommonMark; marked starts
    # one at any number.
    start = rng.choice([1, 1, 3]) if depth == 0 else 1
    loose = rng.random() < 0.3
    lines: list[str] = []
    for index in range(rng.randint(1, 4)):
        marker = f"{start + index}. " if ordered else rng.choice(["- ", "* "])
        lines.append(marker + _inline(rng, 8))
        if depth < 2 and rng.random() < 0.25:
            indent = " " * len(marker)
            lines.extend(indent + line if line else line for line in _items(rng, depth + 1))
        if loose:
            lines.append("")
    while not lines[-1]:
        lines.pop()
    return lines


def _block(rng: random.Random) -> str:
    shape = rng.randrange(9)
    if shape <= 2:
        return "\n".join(_inline(rng) for _ in range(rng.randint(1, 3)))
    if shape == 3:
        return "#" * rng.randint(1, 4) + " " + _inline(rng, 6)
    if shape == 4:
        return "\n".join(_items(rng, 0))
    if shape == 5:
        # Pi's highlighter colours a known language's words otherwise than Pygments, and
        # where colours change decides where a line too wide wraps: random lines are in no
        # language Pi knows (the written replies hold short lines of known ones).
        language = rng.choice(["", "nosuchlanguage"])
        code = "\n".join(
            "    " * rng.randint(0, 2) + _words(rng, 10) for _ in range(rng.randint(1, 4))
        )
        return f"```{language}\n{code}\n```"
    if shape == 6:
        inner = rng.choice([_inline(rng), "\n".join(_items(rng, 1))])
        return "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
    if shape == 7:
        return "---"
    columns = rng.randint(1, 4)
    rows = [
        "| " + " | ".join(_inline(rng, 5) for _ in range(columns)) + " |"
        for _ in range(rng.randint(2, 4))
    ]
    return "\n".join([rows[0], "|" + "---|" * columns, *rows[1:]])


def _document(rng: random.Random) -> str:
    blocks = [_block(rng) for _ in range(rng.randint(1, 5))]
    text = blocks[0]
    for before, following in itertools.pairwise(blocks):
        # marked, Pi's parser, runs a table or a quote on over a line that ends it in
        # CommonMark, and starts a list numbered from 3 under a paragraph: blank lines
        # part those, as a model writes them.
        tight = before[0] not in "|>" and following[0] not in "|3" and rng.random() < 0.3
        text += ("\n" if tight else "\n\n") + following
    return text


def _plain(text: str, width: int, as_typed: bool = False) -> list[str]:
    # What the user typed is coloured, as Pi colours it: the prompt's bold.
    style = "bold" if as_typed else ""
    lines = markdown_lines(text, width, as_typed=as_typed, style=style)
    return [line.plain for line in lines]


@pytest.mark.pi
@pytest.mark.slow  # runs Pi's renderer on some 350 replies
def test_replies_are_laid_out_line_for_line_as_pi_lays_them_out() -> None:
    rng = random.Random(20261203)
    cases = [(text, width) for text in WRITTEN for width in (12, 30, 80)]
    cases += [(_document(rng), rng.randint(24, 120)) for _ in range(300)]
    drawn = run_pi_script(SCRIPT, stdin=json.dumps(cases))
    for (text, width), pi_lines in zip(cases, drawn, strict=True):
        ours = _plain(text, width)
        diff = "\n".join(difflib.unified_diff(pi_lines, ours, "Pi", "ctxmodes", lineterm=""))
        assert ours == pi_lines, f"{text!r} at {width} cells:\n{diff}"


TYPED = [
    "3) three\n4) four\n\n* star\n+ plus\n- dash",
    "1. a\n1. b\n1. c\n\n01. zero\n02. padded",
    "\\*not emphasis\\* and \\# no heading, a \\\\ backslash and `\\*in code*`",
    "\\# typed heading\n\n1\\. not a list\n\n\\- not a bullet either",
    "fix the tests:\n\n* run `make test`\n  * read the failure\n* then **fix** it",
]
# Not ``\\[``: marked then reads no link in a ``[text](address)`` after it on the line.
ESCAPABLE = ["\\*", "\\_", "\\#", "\\`", "\\\\"]


@pytest.mark.pi
@pytest.mark.slow  # runs Pi's renderer on some 140 prompts
def test_what_the_user_typed_is_laid_out_as_pi_lays_out_a_user_s_message() -> None:
    rng = random.Random(20261204)
    randoms = []
    for _ in range(100):
        words = _document(rng).split(" ")
        # Inside a line, between two of its words: the block each line starts stays as it was.
        inside = [
            i
            for i in range(1, len(words))
            if words[i - 1] and words[i] and "\n" not in words[i - 1] + words[i]
        ]
        for at in sorted(rng.sample(inside, min(len(inside), rng.randint(0, 3))), reverse=True):
            words.insert(at, rng.choice(ESCAPABLE))
        randoms.append(" ".join(words).replace("- ", rng.choice(["- ", "+ ", "* "])))
    cases = [(text, width, True) for text in TYPED + WRITTEN[:6] for width in (12, 40)]
    cases += [(text, rng.randint(24, 120), True) for text in randoms]
    drawn = run_pi_script(SCRIPT, stdin=json.dumps(cases))
    for (text, width, _), pi_lines in zip(cases, drawn, strict=True):
        ours = _plain(text, width, as_typed=True)
        diff = "\n".join(difflib.unified_diff(pi_lines, ours, "Pi", "ctxmodes", lineterm=""))
        assert ours == pi_lines, f"{text!r} at {width} cells:\n{diff}"


def test_code_keeps_its_fences_and_is_coloured_only_in_a_language_known_to_the_highlighter():
    known = markdown_lines("```python\nx = 'a'\n```", 40)
    assert [line.plain for line in known] == ["```python", "  x = 'a'", "```"]
    assert len({str(span.style) for span in known[1].spans}) > 1
    unknown = markdown_lines("```nosuchlanguage\nx = 'a'\n```", 40)
    assert {str(span.style) for span in unknown[1].spans} == {CODE_BLOCK}


def test_a_link_shows_its_address_as_written_whatever_its_scheme():
    lines = _plain("[docs](https://example.com/é?q=a%20b) and [run](javascript:alert(1))", 200)
    assert lines == ["docs (https://example.com/é?q=a%20b) and run (javascript:alert(1))"]
    address = markdown_lines("[docs](https://x.org)", 40)[0]
    assert any(
        str(span.style) == LINK_URL and address.plain[span.start : span.end] == " (https://x.org)"
        for span in address.spans
    )


def test_a_wrapped_line_keeps_the_styles_of_what_it_wraps():
    line = Text("plain ") + Text("bold words here", "bold") + Text(" tail")
    first, second = wrap(line, 16)
    assert (first.plain, second.plain) == ("plain bold words", "here tail")
    assert [(second.plain[span.start : span.end], str(span.style)) for span in second.spans] == [
        ("here", "bold")
    ]


def test_nothing_is_drawn_for_a_blank_reply_and_no_line_ends_in_spaces():
    assert markdown_lines(" \n\n ", 40) == []
    lines = _plain("- a\n\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |", 30)
    assert all(line == line.rstrip() for line in lines)


ARROW = "\u203a"


def test_a_prompt_shows_as_markdown_after_its_arrow_its_markers_and_escapes_as_typed():
    from ctxmodes.tui import render
    from ctxmodes.tui.app import plain

    typed = "fix it:\n\n3) run `make`\n4) read \\*all\\* of it\n\n* then retry"
    shown = plain(render.user_prompt(typed, 40, ["image/png"])).split("\n")
    assert shown == [
        f"{ARROW} fix it:",
        "",
        "  3) run make",
        "  4) read \\*all\\* of it",
        "",
        "  * then retry",
        "  [image image/png]",
    ]
    # Wrapped two cells narrower than the terminal, each row under the first.
    long = plain(render.user_prompt("word " * 20, 30)).split("\n")
    assert all(len(row) <= 30 for row in long)
    assert long[0].startswith(f"{ARROW} word")
    assert long[1].startswith("  word")
    assert plain(render.user_prompt("   ", 30)) == ARROW
