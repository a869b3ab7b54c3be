"""An inline list picker drawn in place of the editor (``/resume``, ``/tree``, choices):
arrows move, typing filters, Enter picks, Esc cancels. It never takes the whole screen.

A picker may ask a question over its rows (rename this session? delete it?): until it is
answered (Enter) or dismissed (Esc), the question takes the keys and the picker stays open."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ctxmodes.tui.line_field import (
    LineField,
    first_grapheme,
    one_line_paste,
    scrolled,
)
from ctxmodes.tui.text_field import TextField, ends_its_line
from ctxmodes.tui.text_wrap import text_cells, truncate_to_width, wrap_words

#: (style, text) pairs.
Pairs = list[tuple[str, str]]

VISIBLE_ROWS: Final = 12

#: How a picker's parts are drawn (the session's style and ``-r``'s use it).
PICKER_STYLE: Final = {
    "picker.title": "bold",
    "picker.query": "#5fafd7",
    "picker.selected": "reverse",
    "picker.hint": "#707070",
    "picker.archived": "#af8700",
    "picker.active": "#5fafd7",
    "picker.notice": "#5fafd7",
    "picker.error": "#d70000",
    "picker.warning": "#af8700",
    "picker.key": "#5f5f5f",
    "picker.dim": "#666666",
    # The resume picker's selected row, as Pi's session selector draws it: on a background,
    # the session's name or first message bold.
    "picker.session_selected": "bg:#3a3a4a",
    "picker.session_selected picker.session": "bold",
}


#: Pi's page actions, which every picker that pages takes, and the way each moves.
_PAGE_DIRECTIONS: Final = {"tui.select.pageUp": -1, "tui.select.pageDown": 1}


def is_typed_text(data: str) -> bool:
    """Whether a key's text is typed into a picker's query, by Pi's rule for its search
    fields: any text without control characters (C0, DEL, C1), so a non-breaking space or
    an emoji's joiner is typed too."""
    return bool(data) and not any(ord(char) < 32 or 0x7F <= ord(char) <= 0x9F for char in data)


@dataclass(frozen=True, slots=True)
class PickerItem:
    key: Any
    #: What typing filters on (lower-cased by the picker).
    text: str
    fragments: Pairs


def _synced(line: LineField, text: str) -> LineField:
    """``line`` holding ``text``: set as Pi's ``setValue`` sets it if someone changed the
    text without editing it."""
    if line.value != text:
        line.set_value(text)
    return line


@dataclass
class PickerQuestion:
    """A question asked over a picker's rows: a confirmation when ``answer`` is ``None``
    (typing is ignored), else a line to type, ``answer`` being its text so far (the asker
    may prefill it). ``on_answer`` receives the typed text (``""`` for a confirmation)."""

    prompt: str
    on_answer: Callable[[str], None]
    answer: str | None = None
    #: Drawn after a confirmation's prompt; each asker names its keys as bound
    #: (:mod:`~ctxmodes.tui.key_hints`), or draws the question itself.
    hint: str = ""
    #: The line the answer is edited in, as Pi's ``Input`` edits it: given ``answer`` as
    #: Pi's ``setValue`` gives a field its text (a new field's cursor stays at the start).
    #: An asker may pass the same line to every question, as Pi keeps one rename field for
    #: all renames in its session selector (its cursor, undo history and kill ring kept).
    line: LineField | None = None

    def __post_init__(self) -> None:
        if self.answer is None:
            return
        if self.line is None:
            self.line = LineField()
        self.line.set_value(self.answer)

    def edited(self, edit: Callable[[LineField], Any]) -> None:
        """Apply ``edit`` to the answer's line (a confirmation has none)."""
        if self.answer is None:
            return
        if self.line is None:
            self.line = LineField(self.answer)
        line = _synced(self.line, self.answer)
        edit(line)
        self.answer = line.value


@dataclass
class Picker:
    """State of one pick. ``items(query)`` gives the rows for the current query (so a caller
    may match partial ids, search lazily ...); ``on_pick`` receives the chosen row, or, for
    a free-text picker (``free_text``), the typed text as the row's key."""

    title: str
    items: Callable[[str], Sequence[PickerItem]]
    on_pick: Callable[[PickerItem], None]
    on_cancel: Callable[[], None] = lambda: None
    #: The line under the rows; each picker names its keys as bound
    #: (:mod:`~ctxmodes.tui.key_hints`), or draws its own lines (``bottom_line``).
    hint: str = ""
    free_text: bool = False
    #: Typing filters the rows; a fixed list of choices (``False``) takes j and k for down
    #: and up instead, as Pi's selectors do, and ignores other letters.
    filterable: bool = True
    #: A fixed list takes j and k (``False``: it ignores every letter, as Pi's ``/fork``
    #: selector does).
    letters_move: bool = True
    #: PageUp and PageDown move :attr:`page_size` rows (``False``: they do nothing, as in
    #: Pi's ``/fork`` selector).
    pages: bool = True
    #: How many rows a page moves, stopping at the first and the last row.
    page_size: int = 10
    #: What marks the selected row, before it, and the style of its first line (a row's
    #: fragments may hold more lines, drawn unmarked).
    cursor: str = "▸ "
    selected_style: str = "class:picker.selected"
    #: The style of the mark, besides :attr:`selected_style`.
    cursor_style: str = ""
    #: The rows are cut to the terminal's width (``items`` reads :attr:`width`): they are
    #: asked for again when the width changes.
    fits_width: bool = False
    #: The columns the picker was last drawn in (0 before it is drawn).
    width: int = 0
    #: A free-text picker for a secret: what is typed is drawn as dots.
    secret: bool = False
    #: A free-text picker whose text may hold several lines, as Pi's multi-line editor
    #: (``ExtensionEditorComponent``) holds them: :meth:`new_line` breaks the line, a paste
    #: keeps its line breaks, and each line is drawn on its own.
    multiline: bool = False
    #: ↑ on the first row goes to the last and ↓ on the last to the first, as in Pi's
    #: selectors that wrap (``/scoped-models``).
    wraps: bool = False
    #: Typing keeps the selected place (the last row when fewer match), as Pi's
    #: ``/scoped-models`` does; ``False``: the best match is selected.
    keeps_place: bool = False
    #: With ``keeps_place`` off, emptying the query keeps the selected place instead of
    #: going to the first row, as Pi's model selector does.
    emptied_keeps_place: bool = False
    #: The hint line starts with the number of rows; ``False``: the hint says it itself.
    counted: bool = True
    #: How many rows are drawn at once.
    visible_rows: int = VISIBLE_ROWS
    #: The line drawn when no row matches.
    empty: str = "  (nothing matches)"
    #: The last line (the hint, a notice, a confirmation) is drawn under the rows;
    #: ``False``: the picker's :attr:`header` draws what it says, as Pi's session selector
    #: says it above its list.
    bottom_line: bool = True
    #: Lines drawn between the title and the query (the ``/model`` picker's scope), each
    #: a run of (style, text) pairs, when given.
    header: Callable[[], Sequence[Pairs]] | None = None
    #: Lines drawn under the rows, about the selected one (its full name …), when given.
    details: Callable[[], Sequence[str]] | None = None
    #: Keys of the picker's own, by Pi's action ids the keymap binds
    #: (``app.session.rename``, ``app.tree.editLabel`` …), run in place of what the id does
    #: in every picker (``tui.editor.cursorLeft`` pages the tree).
    actions: dict[str, Callable[[], None]] = field(default_factory=dict)
    #: The action ids the picker checks a key against, in the order of the Pi selector it
    #: stands for (:data:`~ctxmodes.tui.picker_keys.TREE_KEYS` …); ``None``: Pi's plain
    #: selector's, :data:`~ctxmodes.tui.picker_keys.SELECT_KEYS`.
    key_order: tuple[str, ...] | None = None
    #: Enter with no row matching does nothing and the picker stays open, as in Pi's model
    #: selector; ``False``: Enter closes it all the same.
    stays_open_unmatched: bool = False
    #: The query (or free text) is edited as Pi's selectors' search fields, its single-line
    #: ``Input``, edit theirs (:class:`~ctxmodes.tui.line_field.LineField`: a cursor, word
    #: moves and deletes, a kill ring, undo); ``False``: as Pi's tree selector edits its
    #: search, typing at the end and Backspace taking the last character, nothing else.
    line_editor: bool = True
    #: Actions that, while a query is typed, give their key to the search field instead,
    #: as Pi's session selector does with its non-invasive delete.
    typing_passes: frozenset[str] = frozenset()
    #: Chooses the selection once typing, Backspace or :meth:`clear_query` changed the
    #: query, given the key of the row selected before (``None``: no row was), as Pi's tree
    #: selector keeps its entry; Backspace on an empty query then changes nothing. ``None``:
    #: the picker's own choice (see :attr:`keeps_place`).
    reselect: Callable[[Any], None] | None = None
    #: Esc (and Ctrl+C) first empties a query typed, as in Pi's tree selector; the next
    #: closes the picker.
    clears_query_first: bool = False
    #: What the query line starts with.
    query_label: str = "> "
    #: The hint line starts with the selected row's place among the rows, ``(3/12)``, as
    #: Pi's tree selector counts, rather than their number.
    positioned: bool = False
    #: A paste is dropped, as Pi's tree selector drops it (a paste reaches it wrapped in
    #: escape sequences, which its search never types); ``False``: :meth:`paste` takes it.
    drops_paste: bool = False
    query: str = ""
    selected: int = 0
    #: The question open over the rows, if any.
    question: PickerQuestion | None = None
    #: One line said in place of the hint, until the next key moves or filters: (style,
    #: text).
    notice: tuple[str, str] | None = None
    _rows: Sequence[PickerItem] | None = field(default=None, repr=False)
    #: The query's line, as Pi's search field holds it (with :attr:`line_editor`); it is
    #: given :attr:`query` as Pi's ``setValue`` gives a new field its text, so a query to
    #: open with leaves the cursor at its start, as in Pi's model selector.
    query_line: LineField = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.query_line = TextField(self.query) if self.multiline else LineField(self.query)

    @property
    def query_cursor(self) -> int | None:
        """Where typing goes in the query (``None``: always at its end, as in the tree)."""
        if not self.line_editor:
            return None
        return _synced(self.query_line, self.query).cursor

    def has_field(self) -> bool:
        """Whether a line takes the keys now: a typed answer, a search or a free text."""
        question = self.question
        if question is not None:
            return question.answer is not None
        return self.filterable or self.free_text

    def rows(self) -> Sequence[PickerItem]:
        if self._rows is None:
            self._rows = self.items(self.query)
            self.selected = min(self.selected, max(0, len(self._rows) - 1))
        return self._rows

    def refresh(self) -> None:
        """Ask ``items`` again (the query changed, or results arrived)."""
        self._rows = None

    def type(self, text: str) -> None:
        self.notice = None
        question = self.question
        if question is not None:
            question.edited(lambda line: line.insert(text))
            return
        if not self.has_field():
            for key in text:
                if key in "jk" and self.letters_move:
                    self.move(1 if key == "j" else -1)
            return
        if not self.line_editor:
            before = self.selected_key()
            self.query += text
            self._filtered(before)
            return
        self._edit_query(lambda line: line.insert(text))

    def paste(self, text: str) -> None:
        """A bracketed paste, taken as Pi's search and answer fields take one: line breaks
        dropped and a tab as four spaces, undone in one step; a fixed list of choices
        ignores it."""
        self.notice = None
        question = self.question
        if question is not None:
            question.edited(lambda line: line.paste(text))
            return
        if not self.has_field():
            return
        if not self.line_editor:
            self.type(one_line_paste(text))
            return
        self._edit_query(lambda line: line.paste(text, lines=self.multiline))

    def new_line(self) -> None:
        """Break the line at the cursor, in a multi-line text (elsewhere nothing)."""
        line = self.query_line
        if isinstance(line, TextField) and self.free_text and self.question is None:
            self.notice = None
            self._edit_query(lambda synced: line.new_line())

    def backslash_new_line(self) -> bool:
        """Enter right after a ``\\`` in a multi-line text: the backslash becomes a line
        break, as Pi's editor takes it for terminals that send Shift+Enter as Enter; whether
        it did (else Enter submits)."""
        if not self.multiline or self.question is not None:
            return False
        line = _synced(self.query_line, self.query)
        if not line.value[: line.cursor].endswith("\\"):
            return False
        self.edit("tui.editor.deleteCharBackward")
        self.new_line()
        return True

    def set_text(self, text: str) -> None:
        """Replace the free text (with what an external editor wrote), the cursor at its
        end as Pi's editor's ``setText`` leaves it."""
        line = _synced(self.query_line, self.query)
        line.set_value(text)
        line.cursor = len(text)
        self.query = text

    def edit(self, action: str) -> bool:
        """Pi's editor action ``action`` (``tui.editor.deleteWordBackward`` …) on the typed
        answer, else on the query, whose rows are then filtered again; whether the picker
        took it (a search edited as the tree's takes Backspace only)."""
        question = self.question
        if question is not None:
            self.notice = None
            question.edited(lambda line: line.edit(action))
            return True
        if not self.line_editor:
            if action != "tui.editor.deleteCharBackward":
                return False
            self.backspace()
            return True
        if not self.has_field():
            return True  # nothing typed to edit: the selection stays
        self.notice = None
        self._edit_query(lambda line: line.edit(action))
        return True

    def refilter(self) -> None:
        """A key the search took without changing it: the rows are filtered again all the
        same, as Pi's selectors filter after every key their search field takes."""
        if self.question is None and self.filterable and self.line_editor:
            self._filtered(self.selected_key())

    def _edit_query(self, edit: Callable[[LineField], Any]) -> None:
        before = self.selected_key() if self.filterable else None
        line = _synced(self.query_line, self.query)
        edit(line)
        self.query = line.value
        if self.filterable:
            self._filtered(before)

    def selected_key(self) -> Any:
        """The key of the selected row (``None`` while no row is shown)."""
        rows = self.rows()
        return rows[self.selected].key if rows else None

    def _filtered(self, before: Any) -> None:
        """The query changed: the rows again, and the selection as the picker keeps it;
        ``before``: the key of the row selected before the change."""
        self.refresh()
        if self.reselect is not None:
            self.reselect(before)
            return
        if not self.keeps_place and not (self.emptied_keeps_place and not self.query):
            self.selected = 0

    def backspace(self) -> None:
        self.notice = None
        if self.line_editor or self.question is not None:
            self.edit("tui.editor.deleteCharBackward")
            return
        if not self.filterable:
            return  # nothing typed to take back: the selection stays
        before, query = self.selected_key(), self.query
        self.query = self.query[:-1]
        if self.reselect is not None and self.query == query:
            return  # as in Pi's tree selector: nothing taken, nothing changes
        self._filtered(before)

    def clear_query(self, *, always: bool = False) -> bool:
        """Esc or Ctrl+C: empty the query, when the picker empties it before closing (or
        ``always``, for a key that does in this picker only) and something is typed;
        whether it did (else the key closes the picker)."""
        first = self.clears_query_first or always
        if not first or not self.query or self.question is not None:
            return False
        self.notice = None
        before = self.selected_key()
        # Pi's setValue(""): the cursor to the start, the undo history and kill ring kept.
        _synced(self.query_line, self.query).set_value("")
        self.query = ""
        self._filtered(before)
        return True

    def closes_on_enter(self) -> bool:
        """Whether Enter closes the picker: unless it stays open when no row matches and
        none does."""
        return self.free_text or not self.stays_open_unmatched or bool(self.rows())

    def move(self, delta: int) -> None:
        self._step(delta, wrap=self.wraps and abs(delta) == 1)

    def page(self, direction: int) -> None:
        """PageUp (``-1``) or PageDown (``1``): :attr:`page_size` rows, stopping at the
        first or last row (a page never wraps), unless the picker has no pages."""
        if self.pages:
            self._step(self.page_size * direction, wrap=False)

    def _step(self, delta: int, *, wrap: bool) -> None:
        if self.question is not None:
            return  # the question is about the selected row
        self.notice = None
        count = len(self.rows())
        if not count:
            return
        if wrap:
            self.selected = (self.selected + delta) % count
        else:
            self.selected = max(0, min(count - 1, self.selected + delta))

    def act(self, action: str) -> bool:
        """Run the picker's own ``action``, or Pi's page action when the picker pages, if no
        question is open; whether it ran."""
        if self.question is not None:
            return False
        run = self.actions.get(action)
        if run is not None:
            run()
            return True
        direction = _PAGE_DIRECTIONS.get(action)
        if direction is None or not self.pages:
            return False
        self.page(direction)
        return True

    def ask(self, question: PickerQuestion) -> None:
        self.question = question
        self.notice = None

    def answer(self) -> None:
        """Enter while a question is open: it closes, then hears the answer (and may ask
        again, say when the answer will not do)."""
        question, self.question = self.question, None
        if question is not None:
            question.on_answer(question.answer or "")

    def dismiss(self) -> None:
        """Esc while a question is open: back to the rows, nothing done."""
        self.question = None

    def say(self, text: str, *, error: bool = False) -> None:
        self.notice = ("class:picker.error" if error else "class:picker.notice", text)

    def pick(self) -> None:
        if self.free_text:
            self.on_pick(PickerItem(self.query, self.query, []))
            return
        rows = self.rows()
        if rows:
            self.on_pick(rows[self.selected])

    def fragments(self, width: int = 0) -> StyleAndTextTuples:
        """What the picker draws; ``width``: the terminal's columns, to which the title is
        wrapped at spaces (it may be a long sentence, and the rows below are cut, not
        wrapped, to keep one row per line)."""
        question = self.question
        if question is not None and question.answer is not None:
            return self._typed_answer(question, width)
        if self.fits_width and width != self.width:
            self.width = width
            self.refresh()
        rows = self.rows()
        title = wrap_words(self.title, width - 1) if width > 1 else self.title
        parts: StyleAndTextTuples = [("class:picker.title", title)]
        for header_line in self.header() if self.header is not None else ():
            parts += [("", "\n"), *header_line]
        if self.multiline:
            field = _synced(self.query_line, self.query)
            assert isinstance(field, TextField)  # a multi-line picker's field
            parts += [("", "\n"), *_lines_with_cursor(field, width)]
        elif self.filterable:
            shown = "•" * len(self.query) if self.secret else self.query
            parts += [("", "\n"), *self._query_line(shown, width)]
        if self.free_text:
            parts += [("", "\n"), ("class:picker.hint", self.hint)]
            return parts
        # A confirmation is about the selected row: it is drawn as the question is.
        chosen = self.selected_style + (" class:picker.error" if question else "")
        visible = self.visible_rows
        start = max(0, min(self.selected - visible // 2, len(rows) - visible))
        unmarked = " " * len(self.cursor)
        for index in range(start, min(len(rows), start + visible)):
            style = chosen if index == self.selected else ""
            parts.append(("", "\n"))
            if index == self.selected:
                parts.append((f"{style} {self.cursor_style}".strip(), self.cursor))
            else:
                parts.append(("", unmarked))
            for fragment_style, text in rows[index].fragments:
                if text.startswith("\n"):
                    style = ""  # the row's further lines are not marked
                parts.append((f"{style} {fragment_style}".strip(), text))
        if not rows:
            # Cut as Pi cuts its selectors' empty line, when the rows are cut too.
            empty = truncate_to_width(self.empty, width, "…") if self.fits_width else self.empty
            parts += [("", "\n"), ("class:picker.hint", empty)]
        for line in self.details() if self.details is not None else ():
            parts += [("", "\n"), ("class:picker.hint", line)]
        if not self.bottom_line:
            return parts
        if question is not None:
            last = ("class:picker.error", f"{question.prompt} {question.hint}")
        else:
            hint = f"{self._count(rows)} · {self.hint}" if self.counted else self.hint
            last = self.notice or ("class:picker.hint", hint)
        style, text = last
        # Wrapped as the title is: a long hint or notice is read whole (the count at its end).
        wrapped = wrap_words(text, width - 1) if 1 < width <= len(text) else text
        parts += [("", "\n"), (style, wrapped)]
        return parts

    def _count(self, rows: Sequence[PickerItem]) -> str:
        if self.positioned:
            return f"({self.selected + 1 if rows else 0}/{len(rows)})"
        return str(len(rows))

    def _query_line(self, shown: str, width: int) -> StyleAndTextTuples:
        """The query after :attr:`query_label`, the grapheme at the cursor drawn reversed
        when there is one."""
        if not self.line_editor:
            # A field without a cursor is one row cut at the terminal's edge, as Pi's
            # tree selector draws its search.
            drawn = f"{self.query_label}{shown}"
            return [("class:picker.query", truncate_to_width(drawn, width) if width else drawn)]
        line = _synced(self.query_line, self.query)
        return _line_with_cursor(self.query_label, shown, line, secret=self.secret, width=width)

    def _typed_answer(self, question: PickerQuestion, width: int) -> StyleAndTextTuples:
        """A question to type the answer to takes the rows' place."""
        prompt = wrap_words(question.prompt, width - 1) if width > 1 else question.prompt
        answer = question.answer or ""
        line = _synced(question.line or LineField(answer), answer)
        parts: StyleAndTextTuples = [
            ("class:picker.title", prompt),
            ("", "\n"),
            *_line_with_cursor("> ", answer, line, secret=False, width=width),
        ]
        if self.notice is not None:
            parts += [("", "\n"), self.notice]
        parts += [("", "\n"), ("class:picker.hint", question.hint)]
        return parts


def _lines_with_cursor(field: TextField, width: int) -> StyleAndTextTuples:
    """A text of several lines being edited, each after ``"> "`` or its width of spaces,
    the grapheme at its cursor reversed (a space at a line's end); a line wider than the
    ``width`` cells (0: unknown) goes on over the rows below, wrapped as Pi's editor wraps
    it, whose rows ↑ and ↓ then move between."""
    if width > 2:
        # As Pi's editor: one cell kept for the cursor after a row's last character.
        field.wrap_width = max(1, width - 3)
    parts: StyleAndTextTuples = []
    rows = field.rows()
    for index, row in enumerate(rows):
        if index:
            parts.append(("", "\n"))
        label = "  " if index else "> "
        piece = field.value[row.start : row.end]
        local = field.cursor - row.start
        if 0 <= local < len(piece) or (local == len(piece) and ends_its_line(rows, index)):
            under = first_grapheme(piece[local:])
            parts += [
                ("class:picker.query", f"{label}{piece[:local]}"),
                ("class:picker.query reverse", under or " "),
                ("class:picker.query", piece[local + len(under) :]),
            ]
        else:
            parts.append(("class:picker.query", f"{label}{piece}"))
    return parts


def _line_with_cursor(
    label: str, shown: str, line: LineField, *, secret: bool, width: int
) -> StyleAndTextTuples:
    """A line being edited after ``label``, the grapheme at its cursor reversed as Pi's
    ``Input`` draws it (a space at the end), scrolled as Pi scrolls a line wider than the
    ``width`` cells it has (0: unknown, not scrolled); ``shown``: its text as drawn (dots for
    a secret, one a character)."""
    at = min(line.cursor, len(shown))
    if width > 0:
        room = width - text_cells(label)
        if room <= 0:
            return [("class:picker.query", truncate_to_width(label, width, ""))]
        shown, at = scrolled(shown, at, room)
    under = shown[at : at + 1] if secret else first_grapheme(shown[at:])
    return [
        ("class:picker.query", f"{label}{shown[:at]}"),
        ("class:picker.query reverse", under or " "),
        ("class:picker.query", shown[at + len(under) :]),
    ]
