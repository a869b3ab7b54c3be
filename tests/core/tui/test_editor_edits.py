"""The editor's moves and deletes are Pi's editor's, on the keys ``keybindings.json`` gives
them: the real pi-tui ``Editor`` (``pi_text_editor.mjs``) judges the draft's text and cursor
after every key of the same sequences, typed into a prompt_toolkit buffer as the terminal's
editor types them and pressed through the key bindings the terminal makes for these
actions; then the real terminal session takes the keys, rebound ones too."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.output import DummyOutput
from support.agents import make_agent
from support.pi_editor_judge import judge_with_pi_editor
from support.picker_presses import (
    ALT_B,
    ALT_BACKSPACE,
    ALT_D,
    ALT_DELETE,
    ALT_F,
    ALT_Y,
    BACKSPACE,
    CTRL_A,
    CTRL_E,
    CTRL_J,
    CTRL_K,
    CTRL_LEFT,
    CTRL_RIGHT,
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
    typed,
)
from support.terminal import ENTER, run_terminal

from ctxmodes.tui.draft import DraftBuffer
from ctxmodes.tui.editor_edits import EditorEdits, bind_editor_edits
from ctxmodes.tui.editor_rows import WrappedBufferControl
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.layout import editor_rows
from ctxmodes.tui.paste_markers import PasteMarkers

PAGE_UP, PAGE_DOWN = "\x1b[5~", "\x1b[6~"
CTRL_PAGE_UP, CTRL_PAGE_DOWN = "\x1b[5;5~", "\x1b[6;5~"

Ours = Callable[[list[list[str]], KeyMap], list[list[dict[str, Any]]]]

LOG = "\n".join(f"line {number} of the log" for number in range(12))
WIDE = "w" * 1001

CASES: dict[str, list[str]] = {
    "a word delete stops at punctuation, and the kills join for one yank": [
        *typed("cat src/app/main.py now"), CTRL_W, CTRL_W, CTRL_W, CTRL_W, CTRL_Y,
    ],
    "Home, End and the line deletes act on the cursor's line and take its break": [
        *typed("first line"), CTRL_J, *typed("second line"), HOME, CTRL_K, CTRL_K, CTRL_U,
        END, CTRL_U, CTRL_U, CTRL_Y, ALT_Y,
    ],
    "word moves cross a line's edge one step at a time": [
        *typed("alpha beta"), CTRL_J, *typed("gamma"), HOME, ALT_B, ALT_B, ALT_F, ALT_F,
        ALT_F, CTRL_LEFT, CTRL_RIGHT,
    ],
    "a character is a grapheme": [
        *typed("ok 👍🏽 cafe\u0301 東京"), LEFT, LEFT, BACKSPACE, LEFT, LEFT, DELETE, CTRL_A,
        RIGHT, RIGHT, RIGHT, DELETE, CTRL_E, BACKSPACE,
    ],
    "undo takes back a word typed at once, each space apart, and each edit": [
        *typed("hello world  again"), UNDO, UNDO, *typed("x y"), CTRL_W, CTRL_J, *typed("z"),
        UNDO, UNDO, UNDO, UNDO, UNDO, UNDO, UNDO,
    ],
    "a large paste's marker is one character to the moves and the deletes": [
        *typed("see "), paste(LOG), *typed(" and "), paste(WIDE), LEFT, LEFT, RIGHT, ALT_B,
        ALT_B, ALT_F, CTRL_A, ALT_F, ALT_F, DELETE, CTRL_E, CTRL_W, BACKSPACE, BACKSPACE,
        *typed("x"), paste("/etc/hosts"), paste(LOG), LEFT, BACKSPACE, UNDO, UNDO,
    ],
    "Backspace forgets a marker's paste and numbers the later markers down": [
        paste(LOG), paste(WIDE), paste(LOG), CTRL_A, RIGHT, BACKSPACE, CTRL_E, BACKSPACE,
        paste(WIDE), ALT_B, BACKSPACE,
    ],
    "typing between kills starts a new entry; yank-pop goes round the ring": [
        *typed("one two three"), CTRL_W, *typed("x"), CTRL_W, CTRL_W, ALT_D, CTRL_Y, ALT_Y,
        ALT_Y, ALT_BACKSPACE, ALT_DELETE, CTRL_Y,
    ],
}  # fmt: skip

UNITS = [
    *"abz09",
    "é",
    "東",
    "👍",
    "\u0301",
    " ",
    " ",
    ".",
    "/",
    "-",
    paste(LOG),
    paste(WIDE),
    paste("two\nlines"),
    paste("/etc/hosts"),
]
EDITS = [
    BACKSPACE, DELETE, CTRL_W, ALT_BACKSPACE, ALT_D, ALT_DELETE, CTRL_U, CTRL_K, CTRL_Y,
    ALT_Y, LEFT, RIGHT, HOME, END, ALT_B, ALT_F, CTRL_LEFT, CTRL_RIGHT, CTRL_A, CTRL_E,
    CTRL_J, UNDO, UNDO,
]  # fmt: skip


def random_runs(count: int, seed: int) -> list[list[str]]:
    chance = random.Random(seed)
    return [
        [
            chance.choice(UNITS) if chance.random() < 0.45 else chance.choice(EDITS)
            for _ in range(chance.randint(10, 50))
        ]
        for _ in range(count)
    ]


def ours(runs: list[list[str]], keymap: KeyMap) -> list[list[dict[str, Any]]]:
    """The draft after each key, pressed as the terminal takes it: a bound key through its
    binding (the buffer's state saved for undo first where the binding asks
    prompt_toolkit's key processor to), Ctrl+J as the terminal's new line, undo as
    prompt_toolkit's, and typing and pastes through the editor's own."""
    return drawn(runs, keymap)


def drawing_at(width: int, history: list[str]) -> Ours:
    """:func:`ours`, the draft drawn at ``width`` columns before the first key and after
    each (as the terminal draws it, its rows in each step) and ``history`` sent before."""
    return lambda runs, keymap: asyncio.run(_drawn(runs, keymap, width, history))


async def _drawn(
    runs: list[list[str]], keymap: KeyMap, width: int, history: Sequence[str]
) -> list[list[dict[str, Any]]]:
    # In an event loop, in an application: the control starts loading the buffer's
    # history, and asks for the application, as in the terminal.
    with set_app(Application(output=DummyOutput())):
        return drawn(runs, keymap, width, history)


def drawn(
    runs: list[list[str]], keymap: KeyMap, width: int | None = None, history: Sequence[str] = ()
) -> list[list[dict[str, Any]]]:
    return [pressed_one_by_one(keys, keymap, width, history) for keys in runs]


def pressed_one_by_one(
    keys: list[str], keymap: KeyMap, width: int | None, history: Sequence[str]
) -> list[dict[str, Any]]:
    pastes = PasteMarkers()
    buffer = DraftBuffer(None, pastes, multiline=True)
    for sent in history:
        buffer.history.append_string(sent)
    # Drawn as Pi's editor is when nothing stands before its rows.
    control = WrappedBufferControl(buffer, reserved=0, markers=pastes.numbers)
    # Pi's judge's terminal has 40 rows.
    edits = EditorEdits(
        buffer, pastes, line_rows=control.line_rows, page_rows=lambda: editor_rows(40)
    )
    bindings = KeyBindings()
    bind_editor_edits(bindings, keymap, edits, Condition(lambda: True))

    def step() -> dict[str, Any]:
        state: dict[str, Any] = {"value": buffer.text, "cursor": buffer.cursor_position}
        if width is not None:
            content = control.create_content(width, 40)
            lines = buffer.text.split("\n")
            at = content.cursor_position
            state["rows"] = [
                [lines[line][start:end], at.x if at.y == index else None]
                for index, (line, start, end) in enumerate(control.rows)
            ]
        return state

    steps = [step()]
    for key in keys:
        pressed: list[KeyPress] = []
        parser = Vt100Parser(pressed.append)
        parser.feed(key)
        parser.flush()
        found = bindings.get_bindings_for_keys(tuple(each.key for each in pressed))
        if key.startswith("\x1b[200~"):
            edits.paste(key.removeprefix("\x1b[200~").removesuffix("\x1b[201~"))
        elif key == UNDO:
            buffer.undo()
        elif found:
            binding = found[-1]
            if binding.save_before(None):  # type: ignore[arg-type]
                buffer.save_to_undo_stack()
            binding.handler(None)  # type: ignore[arg-type]
        elif key == CTRL_J:
            buffer.save_to_undo_stack()
            buffer.insert_text("\n")
        else:
            edits.type(key)
        steps.append(step())
    return steps


@pytest.mark.pi
@pytest.mark.parametrize("name", list(CASES))
def test_each_key_edits_the_draft_as_pi_s_editor(name: str, tmp_path: Path) -> None:
    judge_with_pi_editor([CASES[name]], ours, tmp_path)


@pytest.mark.pi
@pytest.mark.slow  # several hundred sequences through Pi and through the key bindings
def test_random_key_sequences_edit_the_draft_as_pi_s_editor(tmp_path: Path) -> None:
    judge_with_pi_editor(random_runs(400, seed=20261203), ours, tmp_path)


SENT = ["first prompt", "  a prompt of\ntwo lines  ", "first prompt", "first prompt", "   "]
LONG = "the quick brown fox jumps over the lazy dog, then naps"

WRAPPED_CASES: dict[str, list[str]] = {
    "↑ and ↓ move between a long line's rows and keep the column they started from": [
        *typed(LONG), UP, UP, UP, DOWN, DOWN, DOWN, HOME, DOWN, DOWN, UP, END, UP,
    ],
    "↑ on the first row goes to its start, then back through the prompts sent": [
        *typed("draft"), UP, UP, UP, UP, UP, DOWN, DOWN, DOWN, DOWN, DOWN,
    ],
    "an edit keeps the prompt shown as a draft of its own": [
        UP, UP, *typed("x"), UP, UP, DOWN, DOWN, UP, CTRL_W, UP, DOWN, DOWN,
    ],
    "rows wrap after the spaces before a word and between CJK characters": [
        *typed("東京と大阪と名古屋と札幌と福岡 and   spaced    words"), UP, UP, LEFT, UP,
        DOWN, DOWN, CTRL_J, *typed("x"), UP, UP, UP,
    ],
    "PageUp and PageDown move a page of rows and stop at the first and the last": [
        paste(" ".join([LONG] * 6)), PAGE_UP, PAGE_UP, END, PAGE_DOWN, LEFT, PAGE_DOWN,
        PAGE_UP, CTRL_PAGE_UP, CTRL_PAGE_DOWN,
    ],
    "a marker is one piece a row takes whole or cuts for the eye": [
        *typed("see "), paste(LOG), *typed(" then "), paste(WIDE), UP, UP, DOWN, DOWN, DOWN,
    ],
}  # fmt: skip


@pytest.mark.pi
@pytest.mark.parametrize("name", list(WRAPPED_CASES))
def test_the_draft_is_drawn_in_pi_s_rows_which_up_and_down_move_between(
    name: str, tmp_path: Path
) -> None:
    judge_with_pi_editor(
        [WRAPPED_CASES[name]], drawing_at(20, SENT), tmp_path, width=20, history=SENT
    )


@pytest.mark.pi
@pytest.mark.slow  # several hundred sequences at four widths through Pi
@pytest.mark.parametrize("width", [9, 13, 24, 41])
def test_random_keys_draw_and_move_through_the_rows_as_pi_s_editor(
    width: int, tmp_path: Path
) -> None:
    chance = random.Random(width)
    runs = [
        [
            chance.choice([*UNITS, "word ", "東京"])
            if chance.random() < 0.5
            else chance.choice([*EDITS, UP, DOWN, UP, DOWN, PAGE_UP, PAGE_DOWN])
            for _ in range(chance.randint(10, 60))
        ]
        for _ in range(300)
    ]
    judge_with_pi_editor(runs, drawing_at(width, SENT), tmp_path, width=width, history=SENT)


def test_the_terminal_s_editor_takes_the_keys_keybindings_json_gives_them(tmp_path: Path):
    path = tmp_path / "keybindings.json"
    path.write_text(json.dumps({"tui.editor.deleteWordBackward": "alt+w"}))
    agent = make_agent(tmp_path, [{"text": "done"}])

    async def scenario(t):
        await t.type("open src/app/main.py")
        await t.type("\x1bw")  # Alt+W, bound to the word delete
        await t.until(lambda: t.session.buffer.text == "open src/app/main.", "the word deleted")
        await t.type(CTRL_W)  # no longer the word delete: prompt_toolkit's own, to a space
        await t.until(lambda: t.session.buffer.text == "open ", "the path deleted")
        await t.type(CTRL_Y)  # Pi's yank: the kill ring holds what Alt+W took
        await t.until(lambda: t.session.buffer.text == "open py", "the word yanked")
        await t.type(ENTER)
        await t.printed("done")

    run_terminal(agent, scenario, keymap=KeyMap.load(path))


def test_backspace_in_a_command_s_name_looks_for_its_completions_again(tmp_path: Path):
    agent = make_agent(tmp_path, [])
    shown: list[list[str]] = []

    async def scenario(t):
        await t.type("/mode")
        await t.type(BACKSPACE)
        await t.until(lambda: t.session.buffer.complete_state is not None, "the completions")
        state = t.session.buffer.complete_state
        shown.append([completion.text.strip() for completion in state.completions])

    run_terminal(agent, scenario)
    assert {"/mode", "/model"} <= set(shown[0])
