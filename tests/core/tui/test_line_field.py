"""Every picker's search field and typed answer edit their line as Pi's single-line ``Input``
does. The real pi-tui ``Input`` (``pi_line_input.mjs``) judges the text and the cursor after
every key of the same key sequences, as a terminal sends them: through our keymap and the
pickers' key bindings into a typed answer's line, whose keys are Pi's ``Input``'s in its
order. The sequences cover every editing key (word moves and deletes at punctuation, the
kill ring and its joined kills, yank-pop, undo and how typing is grouped for it), pastes,
and text with wide characters, emoji with modifiers and joiners, and combining marks; some
are written by hand, several hundred drawn at random; the keys are Pi's defaults and keys
moved in ``keybindings.json``, one key bound to two actions."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.key_binding import KeyBindings
from support.pi_oracle import run_pi_script
from support.picker_presses import (
    ALT_B,
    ALT_BACKSPACE,
    ALT_D,
    ALT_DELETE,
    ALT_F,
    ALT_LEFT,
    ALT_RIGHT,
    ALT_Y,
    BACKSPACE,
    CTRL_A,
    CTRL_B,
    CTRL_C,
    CTRL_D,
    CTRL_E,
    CTRL_END,
    CTRL_F,
    CTRL_G,
    CTRL_HOME,
    CTRL_J,
    CTRL_K,
    CTRL_LEFT,
    CTRL_RIGHT,
    CTRL_U,
    CTRL_W,
    CTRL_Y,
    DELETE,
    END,
    ENTER,
    ESC,
    HOME,
    LEFT,
    RIGHT,
    UNDO,
    paste,
    press,
    typed,
)  # fmt: skip

from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.line_field import LineField, graphemes, word_backward, word_forward
from ctxmodes.tui.picker import Picker, PickerQuestion
from ctxmodes.tui.picker_keys import PickerKeys, bind_picker_keys

SCRIPT = Path(__file__).parents[2] / "support" / "pi_line_input.mjs"

EDIT_KEYS = [
    BACKSPACE, DELETE, CTRL_D, LEFT, RIGHT, HOME, END, CTRL_A, CTRL_B, CTRL_E, CTRL_F,
    CTRL_HOME, CTRL_END, ALT_LEFT, ALT_RIGHT, CTRL_LEFT, CTRL_RIGHT, ALT_B, ALT_F, ALT_D,
    ALT_Y, CTRL_W, ALT_BACKSPACE, ALT_DELETE, CTRL_U, CTRL_K, CTRL_Y, UNDO, CTRL_G,
]  # fmt: skip


#: (the text set first, the keys pressed).
CASES: dict[str, tuple[str, list[str]]] = {
    "word moves stop at punctuation inside a word and skip runs of it": (
        "foo.bar(baz) -- qux!",
        [END, ALT_B, ALT_B, ALT_B, CTRL_LEFT, ALT_LEFT, ALT_B, ALT_F, ALT_F, CTRL_RIGHT,
         ALT_RIGHT, ALT_F, ALT_F, HOME, ALT_F],
    ),
    "word deletes join in one kill, yanked whole": (
        "one two three four",
        [END, CTRL_W, CTRL_W, ALT_BACKSPACE, CTRL_Y, HOME, ALT_D, ALT_D, ALT_DELETE, CTRL_Y],
    ),
    "a move between kills starts a new entry, and yank-pop cycles the ring": (
        "alpha beta gamma delta",
        [END, CTRL_W, LEFT, CTRL_W, HOME, CTRL_K, CTRL_Y, ALT_Y, ALT_Y, ALT_Y, LEFT, ALT_Y,
         CTRL_Y, ALT_Y],
    ),
    "Ctrl+U and Ctrl+K kill to either end and join with word kills": (
        "start middle end",
        [ALT_F, RIGHT, CTRL_K, CTRL_W, CTRL_Y, ALT_B, CTRL_U, CTRL_U, CTRL_Y, END, CTRL_U,
         CTRL_Y],
    ),
    "undo takes back a word typed at once and each space apart": (
        "",
        [*typed("hello world  again"), UNDO, UNDO, UNDO, UNDO, UNDO, UNDO, UNDO],
    ),
    "undo after a move, a delete, a kill, a yank and a paste": (
        "abc def",
        [END, *typed("gh"), LEFT, *typed("x"), BACKSPACE, DELETE, CTRL_W, CTRL_Y,
         paste("p\tq\r\nr"), UNDO, UNDO, UNDO, UNDO, UNDO, UNDO, UNDO, UNDO, UNDO],
    ),
    "wide characters and emoji are one step each": (
        "東京 👍🏽 👨‍👩‍👧 ok",
        [END, LEFT, LEFT, LEFT, LEFT, BACKSPACE, LEFT, LEFT, DELETE, HOME, RIGHT, RIGHT,
         ALT_F, ALT_F, ALT_B, CTRL_W, CTRL_Y],
    ),
    "combining marks stay with their letter": (
        "cafe\u0301 nai\u0308ve",
        [END, LEFT, LEFT, LEFT, BACKSPACE, HOME, ALT_F, LEFT, DELETE, *typed("e\u0301"),
         ALT_B, ALT_D],
    ),
    "CJK words are cut by ICU's dictionary": (
        "東京都庁に行く。Tokyo",
        [END, ALT_B, ALT_B, ALT_B, ALT_B, ALT_B, ALT_F, ALT_F, CTRL_W, ALT_D, CTRL_Y],
    ),
    "whitespace of every kind is skipped by word moves": (
        "a\u00a0b\u3000c\u2003 d",
        [END, ALT_B, ALT_B, ALT_B, ALT_B, ALT_F, ALT_F, CTRL_W, ALT_D],
    ),
    "Ctrl+D and Delete delete forward; Enter, Ctrl+J and Esc leave the text": (
        "keep this",
        [CTRL_D, CTRL_D, DELETE, ENTER, CTRL_J, ESC, CTRL_C, END, CTRL_D, DELETE],
    ),
    "a paste is cleaned and inserted at the cursor": (
        "before after",
        [ALT_F, paste("\tone\r\ntwo\nthree\r"), CTRL_W, ALT_B, paste(""), UNDO],
    ),
    "yank with an empty ring and yank-pop with one entry do nothing": (
        "x",
        [CTRL_Y, ALT_Y, END, CTRL_W, CTRL_Y, ALT_Y, CTRL_Y, ALT_Y],
    ),
    "control keys no action binds are ignored": (
        "text",
        [CTRL_G, "\x0e", "\x10", END, "\x12", "\x14"],
    ),
}  # fmt: skip

#: Pi's keys moved in keybindings.json, two actions sharing a key: Pi's Input checks undo
#: before the word delete, submit before the kill to the end and the yank before the move
#: to the start, so those run.
REBOUND = {
    "tui.editor.undo": ["ctrl+w", "ctrl+z"],
    "tui.editor.deleteWordBackward": ["ctrl+w", "ctrl+o"],
    "tui.input.submit": ["enter", "ctrl+k"],
    "tui.editor.deleteToLineEnd": ["ctrl+k", "ctrl+t"],
    "tui.editor.yank": "ctrl+a",
    "tui.editor.cursorWordLeft": "ctrl+b",
    "tui.editor.cursorLeft": "left",
    "tui.select.cancel": "ctrl+g",
}
REBOUND_KEYS = [
    *typed("ab cd ef"), "\x0f", "\x17", CTRL_B, CTRL_K, "\x14", "\x1a", CTRL_A, CTRL_G, ESC,
    CTRL_C, LEFT, CTRL_W, ALT_F,
]  # fmt: skip

#: What is typed at random: letters, digits, punctuation, spaces of several kinds, wide
#: characters, emoji with a modifier and a joiner, and combining marks.
UNITS = [
    *"abcxyzAZ019_", "é", "e", "\u0301", "\u0308", "東", "京", "に", "カ", "😀", "👍", "🏽",
    "\u200d", "👩", " ", " ", " ", "\u00a0", "\u3000", *".,-/'()!@#:;\"",
]  # fmt: skip
PASTES = ["a\tb", "line\r\nbreak", "東京 tower", "x.y/z", "👍🏽 ok", ""]
STARTS = ["", "foo bar", "héllo wörld.txt", "path/to/file-name.py", "東京 👍🏽 ok"]


def random_runs(count: int, seed: int) -> list[tuple[str, list[str]]]:
    chance = random.Random(seed)
    runs = []
    for _ in range(count):
        keys = []
        for _ in range(chance.randint(8, 40)):
            roll = chance.random()
            if roll < 0.5:
                keys.append(chance.choice(UNITS))
            elif roll < 0.93:
                keys.append(chance.choice(EDIT_KEYS))
            else:
                keys.append(paste(chance.choice(PASTES)))
        runs.append((chance.choice(STARTS), keys))
    return runs


@dataclass
class Field:
    """A typed answer open in a picker, its keys bound as the terminal binds them; what it
    holds, and whether it was answered or dismissed, after each key."""

    keymap: KeyMap
    value: str
    #: The cells the field is drawn in, ``None`` not to draw it.
    width: int | None = None
    line: LineField = field(default_factory=LineField)
    picker: Picker = field(init=False)
    bindings: KeyBindings = field(default_factory=KeyBindings)
    submitted: bool = False
    escaped: bool = False

    def __post_init__(self) -> None:
        self.picker = Picker("field", lambda query: [], lambda item: None)
        actions = PickerKeys(lambda picker: None, lambda picker: None)
        bind_picker_keys(self.bindings, self.keymap, lambda: self.picker, actions)
        self._ask(self.value)

    def _ask(self, text: str) -> None:
        self.picker.ask(PickerQuestion("?", self._answered, answer=text, line=self.line))

    def _answered(self, text: str) -> None:
        self.submitted = True
        self._ask(text)

    def press(self, data: str) -> None:
        press(self.bindings, self.picker, data)
        if self.picker.question is None:  # dismissed: Pi's field stays
            self.escaped = True
            self._ask(self.line.value)

    def state(self) -> dict[str, Any]:
        shown = {
            "value": self.line.value,
            "cursor": self.line.cursor,
            "submitted": self.submitted,
            "escaped": self.escaped,
        }
        if self.width:
            shown["line"] = self.drawn(self.width)
        self.submitted = self.escaped = False
        return shown

    def drawn(self, width: int) -> str:
        """The field's line as the terminal draws it, the cursor's grapheme between the
        escapes that reverse it, as Pi writes it."""
        text = "".join(
            f"\x1b[7m{part}\x1b[27m" if "reverse" in style else part
            for style, part, *_ in self.picker.fragments(width)
        )
        return text.split("\n")[1].rstrip(" ")


def ours(
    runs: list[tuple[str, list[str]]], keymap: KeyMap, width: int | None
) -> list[list[dict[str, Any]]]:
    answers = []
    for value, keys in runs:
        typed_into = Field(keymap, value, width)
        steps = [typed_into.state()]
        for key in keys:
            typed_into.press(key)
            steps.append(typed_into.state())
        answers.append(steps)
    return answers


def pis(
    runs: list[tuple[str, list[str]]],
    bindings: dict[str, Any],
    tmp_path: Path,
    width: int | None,
) -> list[list[dict[str, Any]]]:
    request = tmp_path / "request.json"
    asked = [{"value": v, "keys": k, "width": width} for v, k in runs]
    request.write_text(json.dumps({"bindings": bindings, "runs": asked}))
    answers: list[list[dict[str, Any]]] = run_pi_script(SCRIPT, str(request))
    return answers


def judge(
    runs: list[tuple[str, list[str]]],
    bindings: dict[str, Any],
    tmp_path: Path,
    *,
    width: int | None = None,
) -> None:
    """Our field and Pi's ``Input`` after each key of each run; ``width``: the cells both
    are drawn in after each key, to compare what they show too."""
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps(bindings))
    keymap = KeyMap.load(path)
    assert keymap.problems == ()
    our_runs = ours(runs, keymap, width)
    answers = zip(runs, our_runs, pis(runs, bindings, tmp_path, width), strict=True)
    for (value, keys), our, pi in answers:
        for at, (our_step, pi_step) in enumerate(zip(our, pi, strict=True)):
            pressed = [repr(key) for key in keys[:at]]
            assert our_step == pi_step, f"from {value!r} after {' '.join(pressed)}"


@pytest.mark.pi
@pytest.mark.parametrize("name", list(CASES))
def test_each_key_edits_the_line_as_pi_s_input(name: str, tmp_path: Path) -> None:
    judge([CASES[name]], {}, tmp_path)


@pytest.mark.pi
def test_keys_moved_in_keybindings_json_are_checked_in_pi_s_order(tmp_path: Path) -> None:
    judge([("", REBOUND_KEYS), ("one two", [END, *REBOUND_KEYS])], REBOUND, tmp_path)


@pytest.mark.pi
@pytest.mark.slow  # several hundred sequences through Pi and through the key bindings
def test_random_key_sequences_edit_the_line_as_pi_s_input(tmp_path: Path) -> None:
    judge(random_runs(1000, seed=20260), {}, tmp_path)


#: Lines longer than the field, each scrolled through with the cursor.
LONG_LINES = [
    "the quick brown fox jumps over the lazy dog again and again",
    "東京都庁に行く。東京タワーにも行く。",
    "mixed 東京 text 👍🏽 with 👨‍👩‍👧 emoji and cafe\u0301s",
    "abcdefghijklmnopqrstuvwxyz",
]
SCROLL_KEYS = [END, HOME, CTRL_RIGHT, ALT_F, ALT_F, RIGHT, RIGHT, LEFT, ALT_B, END, LEFT]


@pytest.mark.pi
@pytest.mark.parametrize("width", [8, 13, 24])
def test_a_line_wider_than_the_field_scrolls_as_pi_s_input(width: int, tmp_path: Path) -> None:
    runs = [(line, [*SCROLL_KEYS, *typed("wide 東"), BACKSPACE, CTRL_W]) for line in LONG_LINES]
    judge([*runs, *random_runs(40, seed=width)], {}, tmp_path, width=width)


@pytest.mark.pi
def test_a_field_narrower_than_its_label_shows_what_fits_of_the_label(tmp_path: Path) -> None:
    judge([("some text", [END, LEFT])], {}, tmp_path, width=2)


# What ctxmodes itself holds to, Pi aside.


def test_word_boundaries_keep_a_word_s_inner_punctuation_as_a_stop() -> None:
    text = "read foo.bar_baz(x) now"
    assert word_backward(text, len("read foo.bar_baz")) == len("read foo.")
    assert word_forward(text, len("read ")) == len("read foo")
    assert word_forward(text, len("read foo")) == len("read foo.")
    assert word_backward(text, len("read foo.bar_baz(x) ")) == len("read foo.bar_baz(x")


def test_positions_are_string_indices_past_characters_outside_the_bmp() -> None:
    line = LineField("😀 a😀b")
    line.cursor_line_end()
    line.cursor_word_left()
    assert line.value[line.cursor :] == "b"
    line.delete_char_backward()
    assert line.value == "😀 ab"
    assert graphemes("👍🏽e\u0301") == ["👍🏽", "e\u0301"]


def test_a_yank_pop_after_the_text_was_set_never_moves_the_cursor_before_the_start() -> None:
    line = LineField("one two")
    line.cursor_line_end()
    line.delete_word_backward()
    line.cursor_left()
    line.delete_word_backward()
    line.yank()
    line.set_value("")  # as /scoped-models' Ctrl+C empties its search
    line.yank_pop()
    assert (line.value, line.cursor) == ("two", 3)
