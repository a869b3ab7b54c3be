"""The instructions for a branch summary are edited as Pi's multi-line ``Editor`` edits a
text: the real pi-tui ``Editor`` (``pi_text_editor.mjs``) judges the text and the cursor
after every key of the same key sequences, pressed through our keymap and the picker's key
bindings into the picker that asks for them. The sequences move between lines of unequal
length (the column kept while passing shorter ones), cross line edges with word moves and
deletes, kill the line breaks into the kill ring, and undo; some are written by hand,
several hundred drawn at random over lines shorter than the editor is wide."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.key_binding import KeyBindings
from support.pi_editor_judge import judge_with_pi_editor
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
from ctxmodes.tui.picker import Picker
from ctxmodes.tui.picker_keys import EDITOR_KEYS, PickerKeys, bind_picker_keys


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
        keys = lines(*(chance.choice(["", "ab", "hello world", "x.y z", "東京 ok"]) for _ in "abc"))
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


def test_a_line_wider_than_the_terminal_goes_on_over_the_rows_below() -> None:
    picker = _instructions()
    picker.type("focus on the tests of the parser")
    picker.new_line()
    picker.type("東京 and more")
    assert _drawn(picker, 12) == [
        "> focus on t",
        "  he tests o",
        "  f the pars",
        "  er",
        "  東京 and m",
        "  ore[ ]",
    ]
    picker.edit("tui.editor.cursorUp")
    picker.edit("tui.editor.cursorLineEnd")
    assert _drawn(picker, 12)[3] == "  er[ ]"
    picker.edit("tui.editor.cursorLineStart")
    assert _drawn(picker, 12)[0] == "> [f]ocus on t"


def test_a_cursor_after_a_full_row_stands_on_a_row_of_its_own() -> None:
    picker = _instructions()
    picker.type("0123456789")
    assert _drawn(picker, 12) == ["> 0123456789", "  [ ]"]
