"""Internal to ctxmodes: a reply's Markdown laid out line by line as Pi's ``Markdown``
component (pi-tui) lays it out, so a reply reads in the terminal as it reads in Pi.

Code blocks keep their fences (`````python`` … `````), their lines indented by two
spaces, so code copied from the terminal is the code; list items start ``- `` or ``1. ``,
nested ones four spaces in; a quote's lines start ``│ ``; level one and two headings are
bare, the deeper ones keep their ``###``; a link's address follows its text in
parentheses; a table is drawn with box lines, its columns shrunk and its cells wrapped to
fit. Blocks are parted by one blank line, except where Pi parts nothing: a list right
under a paragraph, and what follows a list with no blank line between them. A line break
in a paragraph stays a line break, and every line is wrapped at spaces as Pi wraps it
(``wrapTextWithAnsi``), a word wider than the line cut by graphemes.

The source is parsed by markdown-it (CommonMark, with GFM tables and strikethrough) where
Pi uses marked; where a blank line stood between two blocks is read from the lines the
parser says each block took. Lines are rich :class:`~rich.text.Text`, so styles survive
wrapping without tracking escape sequences.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Final

from rich.style import Style
from rich.text import Text

from ctxmodes.tui.grapheme_cells import cjk_break, grapheme_cells
from ctxmodes.tui.line_field import graphemes, visible_width

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from markdown_it.tree import SyntaxTreeNode

#: An escape typed by the user, a piece of text of its own (no colour of its own).
_ESCAPE: Final = Style(meta={"escape": True})
#: Styles after Pi's dark theme, in the terminal's own sixteen colours.
HEADING: Final = "bold yellow"
LINK: Final = "underline blue"
LINK_URL: Final = "dim"
CODE: Final = "cyan"
CODE_BLOCK: Final = "green"
BORDER: Final = "dim"
QUOTE: Final = "dim italic"
BULLET: Final = "cyan"

_CODE_INDENT: Final = "  "
_HR_MAX_CELLS: Final = 80
#: A table cell's longest word is kept whole up to this many cells (Pi's constant).
_UNBROKEN_WORD_CELLS: Final = 30
_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
_LISTS: Final = frozenset({"bullet_list", "ordered_list"})
#: markdown-it's block names as marked (and so Pi's spacing rules) names them.
_KINDS: Final = {
    "bullet_list": "list",
    "ordered_list": "list",
    "fence": "code",
    "code_block": "code",
}


@cache
def _parser(as_typed: bool = False) -> MarkdownIt:
    # The parser and the highlighter are imported at the first reply, not at start-up.
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    # A link's address is shown as the model wrote it, never followed: not percent-encoded,
    # and not refused for its scheme (it would otherwise lose its text's link styling).
    parser.normalizeLink = _as_written  # type: ignore[method-assign]
    parser.validateLink = _any_link  # type: ignore[method-assign]
    if as_typed:
        # Each escape stays a piece of its own, as marked parses it: Pi colours each piece.
        parser.core.ruler.before("text_join", "escapes_as_typed", _escapes_as_typed)
        parser.disable("text_join")
    return parser


def _escapes_as_typed(state: StateCore) -> None:
    """A backslash escape is shown as it was typed (``\\*``), as Pi shows a user's."""
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "text_special" and child.info == "escape":
                child.content = child.markup


def _as_written(url: str) -> str:
    return url


def _any_link(url: str) -> bool:
    return True


def markdown_lines(text: str, width: int, *, as_typed: bool = False, style: str = "") -> list[Text]:
    """``text`` laid out for a terminal ``width`` cells wide, as Pi's ``Markdown`` with no
    padding lays it out; trailing spaces are left off each line. ``as_typed``: with Pi's
    options for what the user typed, a list's markers and a backslash's escapes kept as
    they were written. ``style``: the style of a paragraph's text, as Pi's default text
    style (the colour of what the user typed): Pi colours each piece of text it parsed,
    and where colours change decides where it wraps."""
    text = text.replace("\t", "   ")
    if not text.strip():
        return []
    from markdown_it.tree import SyntaxTreeNode

    document = _Document(text.split("\n"), as_typed, style)
    tree = SyntaxTreeNode(_parser(as_typed).parse(text))
    blocks = document.blocks(tree.children, width)
    lines = [wrapped for line in blocks for wrapped in wrap(line, width, coloured=True)]
    for line in lines:
        line.rstrip()
    return lines


@dataclass(frozen=True)
class _Document:
    """The source's lines, for telling where a blank line stood between two blocks;
    ``as_typed`` and ``style`` as :func:`markdown_lines` takes them."""

    lines: Sequence[str]
    as_typed: bool = False
    style: str = ""

    def _followed_by_blank(self, node: SyntaxTreeNode, following: SyntaxTreeNode) -> bool:
        if node.map is None or following.map is None:
            return False
        start, end = node.map
        last = end
        # A block's lines may run on over the blank lines after it (a list's do); a quote's
        # blank line is its marker alone.
        while last > start and not self.lines[last - 1].strip(" >"):
            last -= 1
        return following.map[0] > last

    def _next_kind(self, nodes: Sequence[SyntaxTreeNode], index: int) -> str | None:
        if index + 1 >= len(nodes):
            return None
        node, following = nodes[index], nodes[index + 1]
        if self._followed_by_blank(node, following):
            return "space"
        if following.type == "paragraph" and following.hidden:
            return "text"
        return _KINDS.get(following.type, following.type)

    def blocks(self, nodes: Sequence[SyntaxTreeNode], width: int) -> list[Text]:
        """The lines of ``nodes``, siblings, each block followed by Pi's spacing."""
        lines: list[Text] = []
        for index, node in enumerate(nodes):
            following = self._next_kind(nodes, index)
            lines.extend(self._block(node, width, following))
            if following == "space":
                lines.append(Text())
        return lines

    def _block(self, node: SyntaxTreeNode, width: int, following: str | None) -> list[Text]:
        spaced = following is not None and following != "space"
        if node.type == "paragraph":
            if node.hidden:  # a tight list item's text: no spacing of its own
                return [self._styled(_inline(node.children))]
            paragraph = self._styled(self._paragraph(node))
            return [paragraph, *_blank(spaced and following != "list")]
        if node.type == "heading":
            return [_heading(node), *_blank(spaced)]
        if node.type in ("fence", "code_block"):
            return [*_code_block(node, self._partial_fence(node), width), *_blank(spaced)]
        if node.type in _LISTS:
            return self._list(node, 0, width)
        if node.type == "blockquote":
            return [*self._quote(node, width), *_blank(spaced)]
        if node.type == "hr":
            return [Text("─" * min(width, _HR_MAX_CELLS), BORDER), *_blank(spaced)]
        if node.type == "table":
            table = _table(node, width, self.lines, self._styled)
            return [*table, *_blank(spaced)]
        return [Text(node.content)]

    def _styled(self, text: Text) -> Text:
        if self.style:
            text.stylize_before(self.style)
        return text

    def _paragraph(self, node: SyntaxTreeNode) -> Text:
        """A paragraph's text; at the top level, each of its lines after the first keeps
        the spaces it starts with, as marked keeps them (CommonMark drops them)."""
        text = _inline(node.children)
        if node.map is None or node.parent is None or node.parent.type != "root":
            return text
        source = self.lines[node.map[0] : node.map[1]]
        pieces = text.split("\n", allow_blank=True)
        if len(pieces) != len(source):  # a code span ran over a line
            return text
        for piece, line in zip(pieces[1:], source[1:], strict=True):
            piece.pad_left(len(line) - len(line.lstrip(" ")))
        return Text("\n").join(pieces)

    def _partial_fence(self, node: SyntaxTreeNode) -> str:
        """The closing fence of a streaming reply's last code block while it is still
        arriving (two backticks of three), which Pi leaves out so that the block does not
        grow a line and lose it again."""
        last = self.lines[-1]
        at_end = node.map is not None and node.map[1] == len(self.lines)
        unclosed = node.type == "fence" and at_end and node.parent and node.parent.type == "root"
        fence = node.markup
        if unclosed and last and len(last) < len(fence) and last == fence[0] * len(last):
            return last
        return ""

    def _quote(self, node: SyntaxTreeNode, width: int) -> list[Text]:
        inner_width = max(1, width - 2)
        inner = self.blocks(node.children, inner_width)
        while inner and not inner[-1].plain:
            inner.pop()
        lines: list[Text] = []
        for line in inner:
            line.stylize_before(QUOTE)
            lines.extend(
                Text("│ ", BORDER) + part for part in wrap(line, inner_width, coloured=True)
            )
        return lines

    def _list(self, node: SyntaxTreeNode, depth: int, width: int) -> list[Text]:
        indent = "    " * depth
        items = node.children
        first_number = int(str(node.attrs.get("start", 1)))
        # A tight list's paragraphs are hidden: its items are bare text.
        loose = any(
            child.type == "paragraph" and not child.hidden
            for item in items
            for child in item.children
        )
        lines: list[Text] = []
        for number, item in enumerate(items, first_number):
            marker = self._marker(node, item, number)
            first_prefix = Text(indent) + Text(marker, BULLET)
            continuation = Text(indent + " " * visible_width(marker))
            item_width = max(1, width - visible_width(indent + marker))
            started = False
            for index, child in enumerate(item.children):
                if child.type in _LISTS:
                    lines.extend(self._list(child, depth + 1, width))
                    started = True
                    child_lines = []
                else:
                    # Pi lays out an item's blocks without the spacing that follows each.
                    child_lines = self._block(child, item_width, None)
                if self._next_kind(item.children, index) == "space":
                    child_lines.append(Text())
                for line in child_lines:
                    for part in wrap(line, item_width, coloured=True):
                        lines.append((continuation if started else first_prefix) + part)
                        started = True
            if not started:
                lines.append(first_prefix)
            if loose and item is not items[-1]:
                lines.append(Text())
        return lines

    def _marker(self, node: SyntaxTreeNode, item: SyntaxTreeNode, number: int) -> str:
        """An item's marker: Pi's (``1. `` counted from the list's start, ``- ``), or the
        one typed (``3) ``, ``* ``)."""
        ordered = node.type == "ordered_list"
        if self.as_typed:
            return f"{item.info}{item.markup} " if ordered else f"{item.markup} "
        return f"{number}. " if ordered else "- "


def _blank(wanted: bool) -> list[Text]:
    return [Text()] if wanted else []


def _heading(node: SyntaxTreeNode) -> Text:
    level = int(node.tag[1:])
    style = f"{HEADING} underline" if level == 1 else HEADING
    text = _inline(node.children)
    if level >= 3:
        text = Text("#" * level + " ") + text
    text.stylize_before(style)
    return text


def _code_block(node: SyntaxTreeNode, partial_fence: str, width: int) -> list[Text]:
    """A code block between its fences, each line wrapped here: as a line its highlighter
    left one colour, whatever colours Pygments gives its words (Pi's highlighter colours
    them otherwise, and where colours change decides where Pi wraps)."""
    language = node.info.strip() if node.type == "fence" else ""
    code = node.content.removesuffix("\n").removesuffix(partial_fence).removesuffix("\n")
    lines = [Text("```" + language, BORDER)]
    for line in _highlighted(code, language):
        shown = Text(_CODE_INDENT) + line
        layout = Text(_CODE_INDENT) + Text(line.plain, CODE_BLOCK)
        lines.extend(_cut(shown, _wrap_spans(layout, width, coloured=True)))
    lines.append(Text("```", BORDER))
    return lines


def _highlighted(code: str, language: str) -> list[Text]:
    """``code``'s lines, coloured as ``language`` when Pygments knows it (Pi leaves a
    language its highlighter does not know uncoloured too, rather than guess one)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    from rich.syntax import Syntax

    plain = [Text(line, CODE_BLOCK) for line in code.split("\n")]
    if not language:
        return plain
    try:
        lexer = get_lexer_by_name(language)
    except ClassNotFound:
        return plain
    syntax = Syntax(code, lexer, theme="ansi_dark", background_color="default")
    lines = syntax.highlight(code).split("\n")
    return lines[: len(plain)]


def _inline(nodes: Sequence[SyntaxTreeNode]) -> Text:
    """Inline Markdown as styled text, a line break kept as one."""
    text = Text()
    for node in nodes:
        kind = node.type
        if kind in ("text", "html_inline"):
            text.append(node.content)
        elif kind == "text_special":
            text.append(node.content, _ESCAPE)
        elif kind in ("softbreak", "hardbreak"):
            text.append("\n")
        elif kind == "code_inline":
            text.append(node.content, CODE)
        elif kind in ("strong", "em", "s"):
            style = {"strong": "bold", "em": "italic", "s": "strike"}[kind]
            inner = _inline(node.children)
            inner.stylize_before(style)
            text.append_text(inner)
        elif kind == "link":
            text.append_text(_link(node))
        elif kind == "image":
            text.append(node.content)
        else:
            text.append_text(_inline(node.children))
    return text


def _link(node: SyntaxTreeNode) -> Text:
    label = _inline(node.children)
    label.stylize_before(LINK)
    href = str(node.attrs.get("href", ""))
    if label.plain in (href, href.removeprefix("mailto:")):
        return label
    return label + Text(f" ({href})", LINK_URL)


def wrap(line: Text, width: int, *, coloured: bool = False) -> list[Text]:
    """``line`` cut at its line breaks, then each piece wrapped to ``width`` cells at spaces
    as Pi's ``wrapTextWithAnsi`` wraps it; ``coloured``: as it wraps the text once Pi has
    coloured it as ``line`` is styled. Pi reads a colour's code as part of the character it
    comes before, so spaces where a style starts or ends (or where a styled line starts)
    wrap as a word, and spaces that overflow a row inside a style leave a row of their own
    when no word follows them on it."""
    return _cut(line, _wrap_spans(line, width, coloured=coloured))


def _wrap_spans(line: Text, width: int, *, coloured: bool) -> list[tuple[int, int]]:
    """Where the rows :func:`wrap` cuts ``line`` into start and end."""
    plain = line.plain
    styles = line.spans if coloured else []
    edges = sorted({span.start for span in styles} | {span.end for span in styles})
    whole = coloured and bool(line.style)

    def styled_at(offset: int) -> bool:
        return whole or any(span.start <= offset < span.end for span in styles)

    spans: list[tuple[int, int]] = []
    start = 0
    for match in [*_LINE_BREAK.finditer(plain), None]:
        end = match.start() if match is not None else len(plain)
        colours = None
        if coloured:
            codes = {edge for edge in edges if start <= edge < end}
            if styled_at(start):
                codes.add(start)
            colours = _Colours(frozenset(codes), styled_at)
        spans.extend(_wrapped(plain, start, end, width, colours))
        if match is not None:
            start = match.end()
    return spans


@dataclass(frozen=True)
class _Colours:
    """Where Pi's colour codes stand in a piece of coloured text: the offsets a code comes
    before, and whether a style is on at an offset."""

    codes: frozenset[int]
    styled_at: Callable[[int], bool]


def _cut(line: Text, spans: Sequence[tuple[int, int]]) -> list[Text]:
    """The parts of ``line`` at ``spans`` (in order, none overlapping), cut in one pass:
    cutting each alone would go over all the line's styles once a part."""
    cuts = sorted({offset for span in spans for offset in span})
    parts = line.divide(cuts)
    part_at = {cut: index + 1 for index, cut in enumerate(cuts)}
    return [parts[part_at[start]] if end > start else Text() for start, end in spans]


@dataclass(frozen=True)
class _Token:
    """A run of spaces, a run of other graphemes, or one CJK character: what Pi wraps between."""

    start: int
    end: int
    cells: int
    blank: bool


def _tokens(plain: str, start: int, end: int, codes: frozenset[int] = frozenset()) -> list[_Token]:
    """The tokens of ``plain[start:end]``, with offsets into ``plain``; spaces that take in
    an offset of ``codes`` (a colour's code comes before it) are no blank (:func:`wrap`)."""
    text = plain[start:end]
    pieces = list(text) if text.isascii() else graphemes(text)
    tokens: list[_Token] = []
    run_start = run_end = start
    run_cells = 0
    kind: str | None = None

    def flush() -> None:
        nonlocal run_start, run_cells
        if run_end > run_start:
            blank = not plain[run_start:run_end].strip() and not any(
                offset in codes for offset in range(run_start, run_end)
            )
            tokens.append(_Token(run_start, run_end, run_cells, blank))
        run_start, run_cells = run_end, 0

    for piece in pieces:
        size = grapheme_cells(piece)
        if cjk_break(piece):
            flush()
            run_end += len(piece)
            run_cells = size
            flush()
            continue
        piece_kind = "space" if piece == " " else "word"
        if run_end > run_start and piece_kind != kind:
            flush()
        kind = piece_kind
        run_end += len(piece)
        run_cells += size
    flush()
    return tokens


def _wrapped(
    plain: str, start: int, end: int, width: int, colours: _Colours | None = None
) -> list[tuple[int, int]]:
    """Where the lines of ``plain[start:end]`` (no line break in it) wrapped to ``width``
    cells start and end; ``colours``: where Pi's colours are in coloured text (:func:`wrap`)."""
    text = plain[start:end]
    if text.isascii() and text.isprintable() and len(text) <= width:
        return [(start, end)]
    tokens = _tokens(plain, start, end, colours.codes if colours is not None else frozenset())
    if sum(token.cells for token in tokens) <= width:
        return [(start, end)]
    spans: list[tuple[int, int]] = []
    line_start = line_end = start
    used = 0
    # Pi's row so far holds only the colour's code: spaces overflowed the row before it.
    held = False
    for token in tokens:
        if token.cells > width and not token.blank:
            if line_end > line_start or held:
                spans.append((line_start, line_end))
            *whole, (line_start, line_end) = _broken(plain, token, width)
            spans.extend(whole)
            used = visible_width(plain[line_start:line_end])
            held = False
        elif used + token.cells > width and used > 0:
            spans.append((line_start, line_end))
            line_start = token.end if token.blank else token.start
            line_end = token.end
            used = 0 if token.blank else token.cells
            held = token.blank and colours is not None and colours.styled_at(token.start)
        else:
            if line_end == line_start:
                line_start = token.start
            line_end = token.end
            used += token.cells
            held = False
    if line_end > line_start or held:
        spans.append((line_start, line_end))
    return [(first, first + len(plain[first:last].rstrip())) for first, last in spans]


def _broken(plain: str, token: _Token, width: int) -> list[tuple[int, int]]:
    """A word wider than the line, cut into pieces of at most ``width`` cells."""
    spans: list[tuple[int, int]] = []
    start = end = token.start
    used = 0
    for grapheme in graphemes(plain[token.start : token.end]):
        size = grapheme_cells(grapheme)
        if used + size > width:
            spans.append((start, end))
            start, used = end, 0
        end += len(grapheme)
        used += size
    spans.append((start, end))
    return spans


def _table(
    node: SyntaxTreeNode,
    width: int,
    source: Sequence[str],
    styled: Callable[[Text], Text],
) -> list[Text]:
    """A table drawn with box lines, as Pi draws it: each column as wide as its widest cell
    when the table fits, else shrunk toward its longest word and its cells wrapped; each
    cell's text ``styled`` as a paragraph's is."""
    head, *bodies = node.children
    header = [styled(_cell_text(cell)) for cell in _rows_of(head)[0]]
    rows = [[styled(_cell_text(cell)) for cell in row] for body in bodies for row in _rows_of(body)]
    columns = len(header)
    overhead = 3 * columns + 1  # "│ " before, " │ " between and " │" after the cells
    room = width - overhead
    if room < columns:
        start, end = node.map or (0, 0)
        return wrap(Text("\n".join(source[start:end])), width)
    natural = [visible_width(cell.plain) for cell in header]
    longest = [max(1, _longest_word(cell.plain)) for cell in header]
    for row in rows:
        for index, cell in enumerate(row[:columns]):
            natural[index] = max(natural[index], visible_width(cell.plain))
            longest[index] = max(longest[index], _longest_word(cell.plain))
    widths = _column_widths(natural, longest, room, sum(natural) <= room)

    def rule(left: str, middle: str, right: str) -> Text:
        inner = f"─{middle}─".join("─" * size for size in widths)
        return Text(f"{left}─{inner}─{right}")

    def drawn(row: Sequence[Text], bold: bool) -> list[Text]:
        wrapped = [
            wrap(row[index] if index < len(row) else Text(), max(1, size), coloured=True)
            for index, size in enumerate(widths)
        ]
        lines = []
        for line_index in range(max(len(cell) for cell in wrapped)):
            line = Text("│ ")
            for index, (cell, size) in enumerate(zip(wrapped, widths, strict=True)):
                part = cell[line_index].copy() if line_index < len(cell) else Text()
                part.append(" " * max(0, size - visible_width(part.plain)))
                if bold:
                    part.stylize_before("bold")
                line.append_text(part)
                line.append(" │ " if index < columns - 1 else " │")
            lines.append(line)
        return lines

    lines = [rule("┌", "┬", "┐"), *drawn(header, bold=True), rule("├", "┼", "┤")]
    for index, row in enumerate(rows):
        lines.extend(drawn(row, bold=False))
        if index < len(rows) - 1:
            lines.append(rule("├", "┼", "┤"))
    lines.append(rule("└", "┴", "┘"))
    return lines


def _rows_of(section: SyntaxTreeNode) -> list[list[SyntaxTreeNode]]:
    return [row.children for row in section.children]


def _cell_text(cell: SyntaxTreeNode) -> Text:
    return _inline(cell.children[0].children) if cell.children else Text()


def _longest_word(text: str) -> int:
    return min(_UNBROKEN_WORD_CELLS, max((visible_width(word) for word in text.split()), default=0))


def _column_widths(natural: list[int], longest: list[int], room: int, fits: bool) -> list[int]:
    """Pi's column widths: the natural ones when the table fits, else each column's longest
    word (or a share of the room by it) grown toward its natural width by its share of
    what is left."""
    columns = len(natural)
    minimum = longest
    if sum(minimum) > room:
        minimum = [1] * columns
        remaining = room - columns
        if remaining > 0:
            weights = [max(0, size - 1) for size in longest]
            total = sum(weights)
            growth = [math.floor(weight / total * remaining) if total else 0 for weight in weights]
            minimum = [size + grown for size, grown in zip(minimum, growth, strict=True)]
            leftover = remaining - sum(growth)
            for index in range(columns):
                if leftover <= 0:
                    break
                minimum[index] += 1
                leftover -= 1
    if fits:
        return [max(size, least) for size, least in zip(natural, minimum, strict=True)]
    potential = sum(max(0, size - least) for size, least in zip(natural, minimum, strict=True))
    extra = max(0, room - sum(minimum))
    widths = [
        least + (math.floor(max(0, size - least) / potential * extra) if potential else 0)
        for size, least in zip(natural, minimum, strict=True)
    ]
    remaining = room - sum(widths)
    while remaining > 0:
        grew = False
        for index in range(columns):
            if remaining > 0 and widths[index] < natural[index]:
                widths[index] += 1
                remaining -= 1
                grew = True
        if not grew:
            break
    return widths
