"""Internal to ctxmodes: the terminal cells Pi gives one grapheme (pi-tui's ``graphemeWidth``),
for a field that scrolls a line by cells as Pi's ``Input`` does.

Pi measures a grapheme, not its characters one by one: an emoji sequence takes two cells
however many characters it joins, a letter with marks the letter's cells, and a modifier
or a mark after a letter nothing. The character classes are Unicode's, through ``regex``
(whose tables are as recent as node's); Pi's test for a recommended emoji sequence
(``\\p{RGI_Emoji}``, a property of strings ``regex`` lacks) is approximated by the shapes
such sequences take: a presentation selector, a skin tone on a modifier base, a keycap.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from ctxmodes.session.jsvalues import js_length

#: Marks that terminals give a cell of their own (Pi's ``terminalSpacingMarkRegex``).
_SPACING_MARKS: Final = (
    r"(?:[\p{Spacing_Mark}--[\u1734\u302E\u302F]]|"
    r"[\u065F\u0F7F\u102B\u102C\u1031\u1033-\u1035\u1038\u103A-\u103E])+"
)
_NON_PRINTING: Final = (
    r"[\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Mark}\p{Surrogate}]"
)
_EMOJI_PRESENTATION: Final = "\ufe0f"
_KEYCAP: Final = "\u20e3"


@cache
def _patterns() -> dict[str, Any]:
    import regex  # imported on the first grapheme that is not plain ASCII

    return {
        "spacing": regex.compile(_SPACING_MARKS, regex.V1),
        "zero": regex.compile(
            r"(?:\p{Default_Ignorable_Code_Point}|\p{Control}|\p{Mark}|\p{Surrogate})+"
        ),
        "leading": regex.compile(f"^{_NON_PRINTING}+", regex.V1),
        "non_printing": regex.compile(_NON_PRINTING, regex.V1),
        "mark": regex.compile(r"\p{Mark}"),
        "wide": regex.compile(r"[\p{East_Asian_Width=Wide}\p{East_Asian_Width=Fullwidth}]"),
        "emoji": regex.compile(r"\p{Emoji}"),
        "presented": regex.compile(r"\p{Emoji_Presentation}"),
        "modifier_base": regex.compile(r"\p{Emoji_Modifier_Base}\p{Emoji_Modifier}"),
    }


def _could_be_emoji(grapheme: str) -> bool:
    """Pi's quick test before its emoji one: the blocks emoji live in, a presentation
    selector, or a sequence (more than two UTF-16 units)."""
    code = ord(grapheme[0])
    return (
        0x1F000 <= code <= 0x1FBFF
        or 0x2300 <= code <= 0x23FF
        or 0x2600 <= code <= 0x27BF
        or 0x2B50 <= code <= 0x2B55
        or _EMOJI_PRESENTATION in grapheme
        or js_length(grapheme) > 2
    )


def _is_emoji_sequence(grapheme: str, patterns: dict[str, Any]) -> bool:
    """Whether ``grapheme`` takes the shape of a recommended emoji (``\\p{RGI_Emoji}``)."""
    first = grapheme[0]
    if not patterns["emoji"].match(first):
        return False
    if len(grapheme) == 1:
        return bool(patterns["presented"].match(first))
    return (
        grapheme[1] == _EMOJI_PRESENTATION
        or grapheme.endswith(_KEYCAP)
        or bool(patterns["modifier_base"].match(grapheme))
        or bool(patterns["presented"].match(first))
    )


def grapheme_cells(grapheme: str) -> int:
    """The cells Pi gives ``grapheme``: an emoji two, a tab three, a wide character two."""
    if grapheme.isascii():
        return 3 if grapheme == "\t" else int(grapheme.isprintable())
    patterns = _patterns()
    if patterns["spacing"].fullmatch(grapheme):
        return len(grapheme)
    if patterns["zero"].fullmatch(grapheme):
        return 0
    if _could_be_emoji(grapheme) and _is_emoji_sequence(grapheme, patterns):
        return 2
    base = patterns["leading"].sub("", grapheme, count=1)
    if not base:
        return 0
    code = ord(base[0])
    if 0x1F1E6 <= code <= 0x1F1FF:  # a regional indicator, even alone
        return 2
    cells = 2 if patterns["wide"].match(base) else 1
    follows_mark = False
    # Cells a terminal may give the characters after the base: spacing marks, and
    # half- and full-width forms after a mark.
    for char in base[1:]:
        if patterns["spacing"].fullmatch(char):
            cells += 1
            follows_mark = False
        elif patterns["mark"].match(char):
            follows_mark = True
        elif not patterns["non_printing"].match(char):
            code = ord(char)
            if follows_mark or 0xFF00 <= code <= 0xFFEF:
                cells += 2 if patterns["wide"].match(char) else 1
            elif code in (0x0E33, 0x0EB3):
                cells += 1
            follows_mark = False
    return cells


@cache
def _cjk() -> Any:
    import regex  # imported on the first grapheme that is not plain ASCII

    return regex.compile(
        r"[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}"
        r"\p{Script_Extensions=Katakana}\p{Script_Extensions=Hangul}"
        r"\p{Script_Extensions=Bopomofo}]"
    )


def cjk_break(grapheme: str) -> bool:
    """Whether Pi wraps before and after ``grapheme`` even without a space
    (``cjkBreakRegex``: Han, kana, Hangul and Bopomofo)."""
    return not grapheme.isascii() and _cjk().match(grapheme) is not None
