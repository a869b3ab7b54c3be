"""The instructions for a branch summary are edited as Pi's multi-line ``Editor`` edits a
text: the real pi-tui ``Editor`` (``pi_text_editor.mjs``) judges the text and the cursor
after every key of the same key sequences, pressed through our keymap and the picker's key
bindings into the picker that asks for them. The sequences move between lines of unequal
length (the column kept while passing shorter ones), cross line edges with word moves and
deletes, kill the line breaks into the kill ring, and undo; some are written by hand,
several hundred drawn at random, over lines shorter than the editor is wide and lines it
wraps into rows, which ↑ and ↓ move between. Pi's own word wrap judges ours on random lines."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.key_binding import KeyBindings
from support.pi_editor_judge import judge_with_pi_editor
from support.pi_oracle import run_pi_script
from support.picker_presses import (
    ALT_B,
    ALT_BACKSPACE,
    ALT_D,
    ALT_DELETE,
    ALT_F,
    ALT_Y,
    BACKSPACE,
    CTRL_J,
    CTRL_K,
    CTRL_U,
    CTRL_W,
    CTRL_Y,
    DELETE,
    DOWN,
    END,
    HOME,
    LEFT,
    RIGHT,
    UNDO,
    UP,
    paste,
    press,
    typed,
)

from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.line_field import graphemes
from ctxmodes.tui.picker import Picker
from ctxmodes.tui.picker_keys import EDITOR_KEYS, PickerKeys, bind_picker_keys
from ctxmodes.tui.text_field import line_rows, word_wrap

WORD_WRAP = Path(__file__).parents[2] / "support" / "pi_word_wrap.mjs"


#: A line Pi's editor wraps over three rows (it wraps at 80 cells until it is drawn).
LONG = "the summary should keep " * 8


def lines(*text: str) -> list[str]:
    """The keys that type ``text``, a line break (Ctrl+J) between its lines."""
    keys: list[str] = []
    for index, line in enumerate(text):
        keys += ([CTRL_J] if index else []) + typed(line)
    return keys


CASES: dict[str, list[str]] = {
    "↑ and ↓ keep the column through a shorter line": [
        *lines("a long first line", "short", "another long line"), LEFT, LEFT, UP, UP, DOWN,
        DOWN, UP, UP, UP, DOWN, DOWN, DOWN,
    ],
    "↑ on the first line goes to its start, ↓ on the last to its end": [
        *lines("one two", "three"), UP, LEFT, UP, UP, RIGHT, DOWN, DOWN, HOME, DOWN,
    ],
    "Home, End and the line deletes act on the cursor's line": [
        *lines("first line", "second line", "third"), UP, LEFT, LEFT, HOME, END, CTRL_U, CTRL_U,
        CTRL_Y, CTRL_K, CTRL_K, CTRL_K, CTRL_Y, UNDO, UNDO,
    ],
    "word moves and deletes stop at a line's edge, then cross it": [
        *lines("alpha beta", "gamma delta"), HOME, ALT_B, ALT_B, ALT_F, ALT_F, ALT_F, HOME,
        CTRL_W, CTRL_W, CTRL_W, CTRL_Y, END, ALT_D, ALT_D, ALT_D, ALT_DELETE, CTRL_Y, ALT_Y,
    ],
    "wide characters and emoji keep their place in the column": [
        *lines("東京 👍🏽 ok", "ab", "café e\u0301 👨\u200d👩\u200d👧 x"), LEFT, LEFT, UP, UP, DOWN,
        DOWN, HOME, RIGHT, RIGHT, RIGHT, UP, UP,
    ],
    "a line break typed or pasted is one step to undo": [
        *lines("one", "two"), paste("p\nq"), UNDO, UNDO, UNDO, UNDO, *typed("x"), CTRL_J,
        *typed("y"), UNDO, UNDO,
    ],
    "→ at the very end keeps its column for the next ↑": [
        *lines("a much longer line", "end"), RIGHT, UP, DOWN, LEFT, UP,
    ],
    "↑ and ↓ move between the rows a line wider than the editor is wrapped into": [
        *lines("short", LONG, "end"), UP, UP, UP, LEFT, LEFT, DOWN, DOWN, UP, HOME, DOWN,
        DOWN, DOWN, END, UP, UP, UP, UP, RIGHT, DOWN,
    ],
    "a word wider than a row is cut where the row is full, CJK wherever it must be": [
        *lines("x" * 100 + " tail", "東京タワー" * 20, "ok"), UP, UP, LEFT, UP, UP, DOWN, DOWN,
        DOWN, DOWN,
    ],
}  # fmt: skip

UNITS = [*"abcxyz019", "é", "東", "👍", "🏽", "\u0301", " ", " ", ".", "-", "/"]
MOVES = [UP, DOWN, LEFT, RIGHT, HOME, END, ALT_B, ALT_F, UP, DOWN, UP, DOWN]
EDITS = [
    BACKSPACE, DELETE, CTRL_W, ALT_BACKSPACE, ALT_D, ALT_DELETE, CTRL_U, CTRL_K, CTRL_Y,
    ALT_Y, UNDO, CTRL_J, CTRL_J,
]  # fmt: skip


def random_runs(count: int, seed: int) -> list[list[str]]:
    chance = random.Random(seed)
    runs = []
    for _ in range(count):
        starts = ["", "ab", "hello world", "x.y z", "東京 ok", LONG[:100]]
        keys = lines(*(chance.choice(starts) for _ in "abc"))
        for _ in range(chance.randint(10, 40)):
            roll = chance.random()
            if roll < 0.35:
                keys.append(chance.choice(UNITS))
            elif roll < 0.75:
                keys.append(chance.choice(MOVES))
            elif roll < 0.97:
                keys.append(chance.choice(EDITS))
            else:
                keys.append(paste(chance.choice(["one\ntwo", "x y", "\n"])))
        runs.append(keys)
    return runs


def ours(runs: list[list[str]], keymap: KeyMap) -> list[list[dict[str, Any]]]:
    answers = []
    for keys in runs:
        picker = _instructions()
        bindings = KeyBindings()
        actions = PickerKeys(lambda picker: None, lambda picker: None)
        bind_picker_keys(bindings, keymap, lambda picker=picker: picker, actions)

        def state(picker: Picker = picker) -> dict[str, Any]:
            return {"value": picker.query, "cursor": picker.query_line.cursor}

        steps = [state()]
        for key in keys:
            press(bindings, picker, key)
            steps.append(state())
        answers.append(steps)
    return answers


@pytest.mark.pi
@pytest.mark.parametrize("name", list(CASES))
def test_each_key_edits_the_text_as_pi_s_editor(name: str, tmp_path: Path) -> None:
    judge_with_pi_editor([CASES[name]], ours, tmp_path)


@pytest.mark.pi
@pytest.mark.slow  # several hundred sequences through Pi and through the key bindings
def test_random_key_sequences_edit_the_text_as_pi_s_editor(tmp_path: Path) -> None:
    judge_with_pi_editor(random_runs(400, seed=20261203), ours, tmp_path)


def _instructions() -> Picker:
    return Picker(
        "?",
        lambda query: [],
        lambda item: None,
        free_text=True,
        filterable=False,
        multiline=True,
        key_order=EDITOR_KEYS,
    )


def _drawn(picker: Picker, width: int) -> list[str]:
    """The text's rows as drawn ``width`` cells wide, the cursor's grapheme in brackets."""
    text = "".join(
        f"[{part}]" if "reverse" in style else part for style, part, *_ in picker.fragments(width)
    )
    return text.split("\n")[1:-1]


def test_a_line_wider_than_the_field_is_wrapped_at_spaces_and_up_moves_a_row() -> None:
    picker = _instructions()
    picker.type("focus on the tests of the parser")
    picker.new_line()
    picker.type("東京 and more")
    # 12 cells: "> " and a cell kept for the cursor leave rows of 9, as Pi's editor keeps one.
    assert _drawn(picker, 12) == [
        "> focus on ",
        "  the ",
        "  tests of ",
        "  the ",
        "  parser",
        "  東京 and ",
        "  more[ ]",
    ]
    picker.edit("tui.editor.cursorUp")  # to the row above, four UTF-16 units in, as in Pi
    assert _drawn(picker, 12)[5] == "  東京 a[n]d "
    picker.edit("tui.editor.cursorUp")
    assert _drawn(picker, 12)[4] == "  pars[e]r"
    picker.edit("tui.editor.cursorLineStart")  # the start of the line, not of the row
    assert _drawn(picker, 12)[0] == "> [f]ocus on "


def test_a_row_keeps_a_cell_for_the_cursor_after_its_last_character() -> None:
    picker = _instructions()
    picker.type("012345678")
    assert _drawn(picker, 12) == ["> 012345678[ ]"]
    picker.type("9")
    assert _drawn(picker, 12) == ["> 012345678", "  9[ ]"]


@pytest.mark.pi
def test_lines_are_wrapped_into_rows_as_pi_s_editor_wraps_them() -> None:
    chance = random.Random(20261203)
    words = [
        "a", "the", "context", "supercalifragilisticexpialidocious", "漢字", "テスト",
        "東京タワー", "👍🏽", "e\u0301", " ", "x" * 25, "naïve", "(x)", "\u00a0",
    ]  # fmt: skip
    cases = [
        (
            "".join(
                chance.choice(words) + chance.choice([" ", "", " ", "  "])
                for _ in range(chance.randint(1, 25))
            ),
            chance.randint(2, 40),
        )
        for _ in range(600)
    ]
    wrapped = run_pi_script(WORD_WRAP, stdin=json.dumps(cases))
    for (line, width), pi_rows in zip(cases, wrapped, strict=True):
        assert [list(row) for row in word_wrap(line, width, graphemes(line))] == pi_rows, (
            f"{line!r} at {width} cells"
        )


@pytest.mark.pi
def test_an_ascii_line_is_wrapped_a_row_at_a_time_into_pi_s_rows() -> None:
    chance = random.Random(20261204)
    words = ["a", "to", "context", "x" * 9, "supercalifragilistic", "(x)", "a-b", "."]
    cases = [
        (
            chance.choice(["", " ", "   "])
            + "".join(
                chance.choice(words) + chance.choice([" ", "", " ", "  ", "     "])
                for _ in range(chance.randint(1, 30))
            ),
            chance.randint(1, 30),
        )
        for _ in range(800)
    ]
    wrapped = run_pi_script(WORD_WRAP, stdin=json.dumps(cases))
    for (line, width), pi_rows in zip(cases, wrapped, strict=True):
        assert [list(row) for row in line_rows(line, width)] == pi_rows, f"{line!r} at {width}"
