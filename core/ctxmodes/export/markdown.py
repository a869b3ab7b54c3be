"""Markdown to HTML for the export: CommonMark (plus tables and strikethrough, without link
reference definitions) with raw HTML disabled, so a ``<script>`` in a message comes out as
text, and code fences highlighted by Pygments into class-styled spans (the page carries the
stylesheet)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

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


def render_markdown(text: str) -> Markup:
    """``text`` as safe HTML (raw HTML in the source is escaped, unsafe links refused)."""
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
