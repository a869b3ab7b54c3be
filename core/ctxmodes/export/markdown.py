"""Markdown to HTML for the export: CommonMark (plus tables and strikethrough, without link
reference definitions) with raw HTML disabled, so a ``<script>`` in a message comes out as
text, and code fences highlighted by Pygments into class-styled spans (the page carries the
stylesheet).

Most messages of a long session are plain sentences: those skip the parser (see
:data:`_PLAIN`), and a text seen recently is not parsed again.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

from markdown_it import MarkdownIt
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

#: CSS class prefix of highlighted code.
CODE_CLASS = "hl"


def _highlight(code: str, language: str, _attrs: Any) -> str:
    if not language:
        return ""  # markdown-it escapes it as plain code
    try:
        lexer = get_lexer_by_name(language)
    except ClassNotFound:
        return ""
    return highlight(code, lexer, _formatter())


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter[str]:
    return HtmlFormatter(nowrap=True, cssclass=CODE_CLASS)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    parser.enable(["table", "strikethrough"])
    # A line such as Pi's summary digests' `[Assistant tool calls]: notes(...)` would be
    # taken as a link reference definition and vanish from the page; it is text here.
    parser.disable("reference")
    return parser


#: Text the parser would render as one paragraph of the text as it is: every line starts
#: with a letter (so it opens no heading, list, quote, fence, table or indented code, and
#: underlines nothing), and no character has a meaning inline (emphasis, code, links,
#: escapes, entities, HTML, strikethrough, line breaks other than ``\n``) or is white space
#: other than the space, which the parser would strip or turn into a break at a line's end.
_PLAIN_LINE = (
    r"[A-Za-z][^\x00-\x1f\x7f-\xa0\\`*_~\[\]!<>&|"
    r"\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*"
)
_PLAIN: Final = re.compile(rf"{_PLAIN_LINE}(?:\n{_PLAIN_LINE})*")
#: Texts of at most this many characters are remembered with their HTML.
_CACHED_CHARS: Final = 4096


def render_markdown(text: str) -> Markup:
    """``text`` as safe HTML (raw HTML in the source is escaped, unsafe links refused)."""
    if _PLAIN.fullmatch(text) and " \n" not in text:
        # What the parser makes of it: the paragraph, its trailing spaces stripped, and only
        # the double quote to escape (``&``, ``<`` and ``>`` are not in it).
        return Markup("<p>" + text.rstrip(" ").replace('"', "&quot;") + "</p>\n")
    if len(text) <= _CACHED_CHARS:
        return _render_cached(text)
    return Markup(_parser().render(text))


@lru_cache(maxsize=1024)
def _render_cached(text: str) -> Markup:
    return Markup(_parser().render(text))


#: Pygments styles for the page's light and dark schemes.
LIGHT_CODE_STYLE = "default"
DARK_CODE_STYLE = "github-dark"


def code_stylesheet() -> str:
    """The Pygments token colours for highlighted code, scoped to :data:`CODE_CLASS`: the
    light style, and the dark one under ``prefers-color-scheme: dark``.

    Only the token rules are kept: a style's own background for the scope would paint the
    whole page (the scope is ``main``), and its unscoped rules would reach the rest of it.
    """
    light = _token_rules(LIGHT_CODE_STYLE)
    dark = _token_rules(DARK_CODE_STYLE)
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def _token_rules(style: str) -> str:
    scope = f".{CODE_CLASS} "
    rules = HtmlFormatter(style=style).get_style_defs(f".{CODE_CLASS}")  # type: ignore[no-untyped-call]
    return "\n".join(line for line in str(rules).splitlines() if line.startswith(scope))
