"""Internal to ctxmodes: one line of text edited as Pi's single-line ``Input`` (pi-tui's
``components/input.js``) edits it, for the pickers' search fields and typed answers.

The editing follows Pi's to the letter: the cursor moves and Backspace and Delete take a
whole grapheme (an emoji with its modifiers, a letter with its combining marks); a word is
what ``Intl.Segmenter`` calls word-like, split further at ASCII punctuation, with the
whitespace and the punctuation runs between words skipped first; consecutive kills join
into one entry of the kill ring (backward kills before it, forward ones after it), which
yank inserts and yank-pop cycles; every edit may be undone, letters typed in a row being
undone together. Both segmentations are ICU's, as node's ``Intl.Segmenter`` is, so they
agree with Pi's on every script (CJK words by ICU's dictionary, too).

Positions are Python string indices (code points); Pi counts UTF-16 units, which name the
same places, as the cursor only ever stands between graphemes.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, Literal

from ctxmodes.session.jsvalues import JS_WHITESPACE
from ctxmodes.tui.grapheme_cells import grapheme_cells

#: Pi's ``PUNCTUATION_REGEX``: the ASCII punctuation a word move stops at inside a word.
_PUNCTUATION: Final = re.compile(r"[(){}\[\]<>.,;:'\"!?+\-=*/\\|&%^$#@~`]")
#: JavaScript's ``\s``: what Pi's ``isWhitespaceChar`` looks for in a piece of text.
_JS_WHITESPACE: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]")
#: A large paste's marker in Pi's editor (``[paste #1 +60 lines]``, ``[paste #2 1500 chars]``).
PASTE_MARKER: Final = re.compile(r"\[paste #(\d+)( (\+\d+ lines|\d+ chars))?\]")
#: ICU's rule statuses of word-like segments (numbers, letters, kana, ideographs), which
#: ``Intl.Segmenter`` reports as ``isWordLike``.
_WORD_LIKE: Final = range(100, 500)

Segment = tuple[str, bool]
LastAction = Literal["type-word", "kill", "yank"] | None

_iterators = threading.local()


def _break_iterator(kind: Literal["word", "character"]) -> Any:
    """ICU's word or grapheme iterator for this thread (one is not to be shared)."""
    iterator = getattr(_iterators, kind, None)
    if iterator is None:
        import icu  # ICU, as node's Intl; imported on first use (it is large)

        locale = icu.Locale("en_US")  # node's default; word breaks are the same in every locale
        if kind == "word":
            iterator = icu.BreakIterator.createWordInstance(locale)
        else:
            iterator = icu.BreakIterator.createCharacterInstance(locale)
        setattr(_iterators, kind, iterator)
    return iterator


def _code_points(text: str) -> Callable[[int], int]:
    """Maps an ICU (UTF-16) offset in ``text`` to a string index."""
    if all(ord(char) < 0x10000 for char in text):
        return lambda offset: offset
    places = [0]
    for index, char in enumerate(text, start=1):
        places.extend([index] * (2 if ord(char) >= 0x10000 else 1))
    return lambda offset: places[offset]


def _segments(text: str, kind: Literal["word", "character"]) -> list[Segment]:
    """``text`` cut as ``Intl.Segmenter`` cuts it, each piece with whether it is word-like."""
    if not text:
        return []
    iterator = _break_iterator(kind)
    iterator.setText(text)
    place = _code_points(text)
    pieces: list[Segment] = []
    start = 0
    for boundary in iterator:
        end = place(boundary)
        word_like = kind == "word" and iterator.getRuleStatus() in _WORD_LIKE
        pieces.append((text[start:end], word_like))
        start = end
    return pieces


def _with_markers(text: str, pieces: list[Segment], markers: Collection[int]) -> list[Segment]:
    """``pieces`` of ``text`` with each marker of a paste numbered in ``markers`` made one
    piece, which is not word-like, as Pi's editor segments its text
    (``segmentWithMarkers``): the cursor and the deletes take a marker whole."""
    if not markers or "[paste #" not in text:
        return pieces
    spans = [
        found.span() for found in PASTE_MARKER.finditer(text) if int(found.group(1)) in markers
    ]
    if not spans:
        return pieces
    merged: list[Segment] = []
    place = 0
    index = 0
    for piece, word_like in pieces:
        while index < len(spans) and spans[index][1] <= place:
            index += 1
        if index < len(spans) and spans[index][0] <= place < spans[index][1]:
            if place == spans[index][0]:
                merged.append((text[slice(*spans[index])], False))
        else:
            merged.append((piece, word_like))
        place += len(piece)
    return merged


def is_paste_marker(piece: str) -> bool:
    """Whether a piece of segmented text is a whole marker, made one by :func:`_with_markers`
    (Pi's ``isPasteMarker``)."""
    return PASTE_MARKER.fullmatch(piece) is not None


def graphemes(text: str, markers: Collection[int] = ()) -> list[str]:
    """``text``'s graphemes (user-perceived characters), as ``Intl.Segmenter`` finds them;
    the marker of each paste numbered in ``markers`` one of them."""
    pieces = _with_markers(text, _segments(text, "character"), markers)
    return [piece for piece, _ in pieces]


def one_line_paste(text: str) -> str:
    """A paste as a one-line field takes it: its line breaks dropped, a tab as four spaces."""
    return text.replace("\r", "").replace("\n", "").replace("\t", "    ")


def editor_paste(text: str) -> str:
    """A paste as Pi's multi-line editor takes it: line ends made ``\\n``, a tab four
    spaces, the other control characters dropped."""
    normal = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    return "".join(char for char in normal if char == "\n" or ord(char) >= 32)


def visible_width(text: str) -> int:
    """The terminal cells Pi gives ``text`` (pi-tui's ``visibleWidth``)."""
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(grapheme_cells(grapheme) for grapheme in graphemes(text))


def first_grapheme(text: str) -> str:
    """``text``'s first grapheme (empty for no text), found without segmenting the rest of
    a long text: a grapheme is a few characters, so a growing head of it is enough."""
    head = 16
    while True:
        found = graphemes(text[:head])
        if not found or len(found) > 1 or head >= len(text):
            return found[0] if found else ""
        head *= 4


def _by_column(sized: list[tuple[str, int]], start: int, length: int) -> str:
    """The graphemes (each with its cells) wholly within cells ``start`` to
    ``start + length`` (pi-tui's strict ``sliceByColumn``: a wide grapheme across either
    edge is left out)."""
    if length <= 0:
        return ""
    end = start + length
    kept: list[str] = []
    column = 0
    for grapheme, cells in sized:
        if start <= column < end and column + cells <= end:
            kept.append(grapheme)
        column += cells
        if column >= end:
            break
    return "".join(kept)


def scrolled(value: str, cursor: int, room: int) -> tuple[str, int]:
    """What a field ``room`` cells wide shows of ``value``, and where the cursor is in it,
    as Pi's ``Input`` scrolls a line too long for it: the cursor kept near the middle, the
    start and the end shown as far as they reach (one cell kept for a cursor at the end)."""
    sized = [(grapheme, grapheme_cells(grapheme)) for grapheme in graphemes(value)]
    total = sum(cells for _, cells in sized)
    if total < room:
        return value, cursor
    scroll_width = room - 1 if cursor == len(value) else room
    if scroll_width <= 0:
        return "", 0
    # Measured on its own, as Pi measures the text before the cursor.
    cursor_column = sum(grapheme_cells(grapheme) for grapheme in graphemes(value[:cursor]))
    half = scroll_width // 2
    if cursor_column < half:
        start = 0
    elif cursor_column > total - half:
        start = max(0, total - scroll_width)
    else:
        start = max(0, cursor_column - half)
    shown = _by_column(sized, start, scroll_width)
    return shown, len(_by_column(sized, start, max(0, cursor_column - start)))


def has_whitespace(text: str) -> bool:
    return _JS_WHITESPACE.search(text) is not None


def _skipped(piece: str) -> bool:
    """Whitespace a word move skips first (never a marker, which has spaces in it)."""
    return not is_paste_marker(piece) and has_whitespace(piece)


def _punctuation_run(segment: Segment) -> bool:
    piece, word_like = segment
    return not word_like and not is_paste_marker(piece) and not has_whitespace(piece)


def word_backward(text: str, cursor: int, markers: Collection[int] = ()) -> int:
    """Where a word move left from ``cursor`` lands (pi-tui's ``findWordBackward``), the
    marker of each paste numbered in ``markers`` one step."""
    if cursor <= 0:
        return 0
    head = text[:cursor]
    segments = _with_markers(head, _segments(head, "word"), markers)
    place = cursor
    while segments and _skipped(segments[-1][0]):
        place -= len(segments.pop()[0])
    if not segments:
        return place
    last, word_like = segments[-1]
    if is_paste_marker(last):
        place -= len(last)
    elif word_like:
        matches = list(_PUNCTUATION.finditer(last))
        place -= len(last) - (matches[-1].end() if matches else 0)
    else:
        while segments and _punctuation_run(segments[-1]):
            place -= len(segments.pop()[0])
    return place


def word_forward(text: str, cursor: int, markers: Collection[int] = ()) -> int:
    """Where a word move right from ``cursor`` lands (pi-tui's ``findWordForward``), the
    marker of each paste numbered in ``markers`` one step."""
    if cursor >= len(text):
        return len(text)
    tail = text[cursor:]
    segments = iter(_with_markers(tail, _segments(tail, "word"), markers))
    place = cursor
    segment = next(segments, None)
    while segment is not None and _skipped(segment[0]):
        place += len(segment[0])
        segment = next(segments, None)
    if segment is None:
        return place
    piece, word_like = segment
    if is_paste_marker(piece):
        return place + len(piece)
    if word_like:
        found = _PUNCTUATION.search(piece)
        return place + (found.start() if found else len(piece))
    while segment is not None and _punctuation_run(segment):
        place += len(segment[0])
        segment = next(segments, None)
    return place


class KillRing:
    """Pi's kill ring: what the kills took, the latest last; consecutive kills join."""

    def __init__(self) -> None:
        self.entries: list[str] = []

    def push(self, text: str, *, prepend: bool, accumulate: bool) -> None:
        if not text:
            return
        if accumulate and self.entries:
            last = self.entries.pop()
            text = text + last if prepend else last + text
        self.entries.append(text)

    def peek(self) -> str | None:
        return self.entries[-1] if self.entries else None

    def rotate(self) -> None:
        """The latest entry to the front, for yank-pop."""
        if len(self.entries) > 1:
            self.entries.insert(0, self.entries.pop())


class LineField:
    """A line being edited: its text, the cursor, the kill ring and what undo restores."""

    def __init__(
        self,
        value: str = "",
        *,
        undo_point: Callable[[], None] | None = None,
        paste_numbers: Callable[[], Collection[int]] = tuple,
    ) -> None:
        self.value = ""
        self.cursor = 0
        self.kill_ring = KillRing()
        #: Called where an edit is about to make an undo step, when the field's holder keeps
        #: the undo history; ``None``: the field keeps its own.
        self._undo_point = undo_point
        #: The numbers of the pastes whose markers the text may hold: each marker is one
        #: character to the cursor and the deletes, as in Pi's editor.
        self._paste_numbers = paste_numbers
        self._undo: list[tuple[str, int]] = []
        self._last: LastAction = None
        self.set_value(value)

    def take(self, value: str, cursor: int) -> None:
        """The text and the cursor as something else left them (typing, a key the field
        does not have): a run of deletes or a yank has ended."""
        self.value, self.cursor = value, cursor
        self._last = None

    def set_value(self, value: str) -> None:
        """Replace the text, as Pi's ``setValue``: the cursor stays where it was, within the
        new text; the undo history, the kill ring and the last action are kept."""
        self.value = value
        self.cursor = min(self.cursor, len(value))

    def grapheme_at_cursor(self) -> str:
        """The grapheme the cursor stands on (empty at the end), which Pi draws reversed."""
        return first_grapheme(self.value[self.cursor :])

    # Typing and pasting.

    def insert(self, text: str) -> None:
        """Typed text; letters typed in a row are undone together, whitespace apart."""
        if has_whitespace(text) or self._last != "type-word":
            self._push_undo()
        self._last = "type-word"
        self._put(text)

    def paste(self, text: str, *, lines: bool = False) -> None:
        """A bracketed paste: line breaks dropped (``lines``: kept, each as one line feed,
        as Pi's multi-line editor keeps them), a tab as four spaces; one undo step."""
        self._last = None
        self._push_undo()
        if lines:
            self._put(editor_paste(text))
            return
        self._put(one_line_paste(text))

    # Deleting.

    def delete_char_backward(self) -> None:
        self._last = None
        if self.cursor > 0:
            self._push_undo()
            before = self._graphemes(self.value[: self.cursor])
            size = len(before[-1]) if before else 1
            self.value = self.value[: self.cursor - size] + self.value[self.cursor :]
            self.cursor -= size

    def delete_char_forward(self) -> None:
        self._last = None
        if self.cursor < len(self.value):
            self._push_undo()
            after = self._graphemes(self.value[self.cursor :])
            size = len(after[0]) if after else 1
            self.value = self.value[: self.cursor] + self.value[self.cursor + size :]

    def delete_word_backward(self) -> None:
        if self.cursor == 0:
            return
        joins = self._last == "kill"
        self._push_undo()
        start = word_backward(self.value, self.cursor, self._paste_numbers())
        self.kill_ring.push(self.value[start : self.cursor], prepend=True, accumulate=joins)
        self._last = "kill"
        self.value = self.value[:start] + self.value[self.cursor :]
        self.cursor = start

    def delete_word_forward(self) -> None:
        if self.cursor >= len(self.value):
            return
        joins = self._last == "kill"
        self._push_undo()
        end = word_forward(self.value, self.cursor, self._paste_numbers())
        self.kill_ring.push(self.value[self.cursor : end], prepend=False, accumulate=joins)
        self._last = "kill"
        self.value = self.value[: self.cursor] + self.value[end:]

    def delete_to_line_start(self) -> None:
        if self.cursor == 0:
            return
        self._push_undo()
        killed = self.value[: self.cursor]
        self.kill_ring.push(killed, prepend=True, accumulate=self._last == "kill")
        self._last = "kill"
        self.value = self.value[self.cursor :]
        self.cursor = 0

    def delete_to_line_end(self) -> None:
        if self.cursor >= len(self.value):
            return
        self._push_undo()
        killed = self.value[self.cursor :]
        self.kill_ring.push(killed, prepend=False, accumulate=self._last == "kill")
        self._last = "kill"
        self.value = self.value[: self.cursor]

    # The kill ring and undo.

    def yank(self) -> None:
        text = self.kill_ring.peek()
        if not text:
            return
        self._push_undo()
        self._put(text)
        self._last = "yank"

    def yank_pop(self) -> None:
        """Right after a yank: the yanked text replaced by the ring's previous entry."""
        if self._last != "yank" or len(self.kill_ring.entries) <= 1:
            return
        self._push_undo()
        previous = self.kill_ring.peek() or ""
        # As Pi does: the yanked text is taken to end at the cursor (it does unless the
        # text was set meanwhile, when Pi's cursor would go below 0 and ours stops there).
        start = max(0, self.cursor - len(previous))
        self.value = self.value[:start] + self.value[self.cursor :]
        self.cursor = start
        self.kill_ring.rotate()
        self._put(self.kill_ring.peek() or "")
        self._last = "yank"

    def undo(self) -> None:
        if not self._undo:
            return
        self.value, self.cursor = self._undo.pop()
        self._last = None

    # Moving.

    def cursor_left(self) -> None:
        self._last = None
        if self.cursor > 0:
            before = self._graphemes(self.value[: self.cursor])
            self.cursor -= len(before[-1]) if before else 1

    def cursor_right(self) -> None:
        self._last = None
        if self.cursor < len(self.value):
            after = self._graphemes(self.value[self.cursor :])
            self.cursor += len(after[0]) if after else 1

    def cursor_line_start(self) -> None:
        self._last = None
        self.cursor = 0

    def cursor_line_end(self) -> None:
        self._last = None
        self.cursor = len(self.value)

    def cursor_word_left(self) -> None:
        if self.cursor == 0:
            return
        self._last = None
        self.cursor = word_backward(self.value, self.cursor, self._paste_numbers())

    def cursor_word_right(self) -> None:
        if self.cursor >= len(self.value):
            return
        self._last = None
        self.cursor = word_forward(self.value, self.cursor, self._paste_numbers())

    def edit(self, action: str) -> bool:
        """Run Pi's editor action ``action`` (``tui.editor.yank`` …); whether the field
        has it."""
        method = EDITS.get(action)
        if method is None:
            return False
        method(self)
        return True

    def _graphemes(self, text: str) -> list[str]:
        return graphemes(text, self._paste_numbers())

    def _put(self, text: str) -> None:
        self.value = self.value[: self.cursor] + text + self.value[self.cursor :]
        self.cursor += len(text)

    def _push_undo(self) -> None:
        if self._undo_point is not None:
            self._undo_point()
        else:
            self._undo.append((self.value, self.cursor))


#: Pi's editor actions that its ``Input`` takes, in the order it checks them after undo and
#: submit, with what each does.
EDITS: Final[Mapping[str, Callable[[LineField], None]]] = {
    "tui.editor.undo": LineField.undo,
    "tui.editor.deleteCharBackward": LineField.delete_char_backward,
    "tui.editor.deleteCharForward": LineField.delete_char_forward,
    "tui.editor.deleteWordBackward": LineField.delete_word_backward,
    "tui.editor.deleteWordForward": LineField.delete_word_forward,
    "tui.editor.deleteToLineStart": LineField.delete_to_line_start,
    "tui.editor.deleteToLineEnd": LineField.delete_to_line_end,
    "tui.editor.yank": LineField.yank,
    "tui.editor.yankPop": LineField.yank_pop,
    "tui.editor.cursorLeft": LineField.cursor_left,
    "tui.editor.cursorRight": LineField.cursor_right,
    "tui.editor.cursorLineStart": LineField.cursor_line_start,
    "tui.editor.cursorLineEnd": LineField.cursor_line_end,
    "tui.editor.cursorWordLeft": LineField.cursor_word_left,
    "tui.editor.cursorWordRight": LineField.cursor_word_right,
}
