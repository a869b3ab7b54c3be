"""The resume picker's rows and hint lines, judged by the real Pi: ``pi_session_selector.mjs``
draws Pi's own session selector over the same files, at the same fixed clock and in the same
widths, and after every key each row's text (the mark, the tree, the name or first message
cut with ``…``, the file, folder, message count and age at the right, the row cut with
``...`` when still too wide), the colour of its message (a name, the current session), the
scroll line, the empty-list line and the two hint lines must be Pi's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.resume_sessions import (
    BACKSPACE,
    CTRL_D,
    CTRL_N,
    CTRL_P,
    DOWN,
    ESC,
    T0,
    TAB,
    draw,
    other_sessions,
    pi_steps,
    press,
    session_id,
    write_session,
)

from ctxmodes.session.paths import cwd_filter, default_session_dir
from ctxmodes.tui.heads import read_head
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.resume import ResumePicker, every_folder_root
from ctxmodes.tui.session_info import read_session_info

CTRL_R = "\x12"
SECOND = 1000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
#: The clock both pickers tell ages by: the other folders' sessions are a month old.
NOW = T0 + 40 * DAY
#: A phone's, a laptop's and a wide terminal's columns, and one narrower than a row's right
#: part.
WIDTHS = [24, 50, 80, 160]


def project_sessions(folder: Path, cwd: Path) -> Path:
    """Sessions whose ages are each of Pi's units and the edges between them, named and
    not, long, with control and wide characters, a fork, one with tool results and one
    with nothing said; returns the one to be the current session."""
    ages = {
        "a": 30 * SECOND,
        "b": 59 * SECOND + 999,
        "c": MINUTE,
        "d": HOUR - 1,
        "e": 3 * HOUR,
        "f": DAY - 1,
        "g": 2 * DAY,
        "h": 7 * DAY - 1,
        "i": 29 * DAY,
        "j": 45 * DAY,
        "k": 365 * DAY - 1,
        "l": 400 * DAY,
        "m": HOUR,
        "n": DAY,
        "o": 7 * DAY,
        "p": 30 * DAY,
        "q": 365 * DAY,
    }
    paths = {}
    for number, (stem, age) in enumerate(ages.items()):
        when = NOW - age
        text = f"question {stem} " + "about the parser and its many cases " * (number % 3) * 3
        paths[stem] = write_session(
            folder / f"{stem}.jsonl",
            session_id(100 + number),
            str(cwd),
            [("user", text, when - 2), ("assistant", "answer", when)][: 1 + number % 2],
        )
    write_session(
        folder / "named.jsonl",
        session_id(200),
        str(cwd),
        [("user", "first", NOW - 5 * MINUTE), ("assistant", "ok", NOW - 5 * MINUTE)],
        name="  release\tnotes 🙂 中文  ",
    )
    write_session(
        folder / "fork.jsonl",
        session_id(201),
        str(cwd),
        [("user", "Refactor\tthe\n\nparser   ✓ 中文 wide", NOW - 10 * DAY)],
        parent=paths["e"],
    )
    write_session(
        folder / "tools.jsonl",
        session_id(202),
        str(cwd),
        [
            ("user", "", NOW - 6 * HOUR),  # no text: not the first message
            ("user", "run the tests", NOW - 6 * HOUR),
            ("assistant", "running", NOW - 6 * HOUR),
            ("toolResult", "12 passed", NOW - 6 * HOUR),
            ("assistant", "all pass", NOW - 6 * HOUR),
        ],
    )
    write_session(folder / "empty.jsonl", session_id(203), str(cwd), [])
    return paths["c"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return tmp_path


def assert_drawn_as_pi_draws(
    project: Path, current: Path, keys: list[str], bindings: dict[str, Any] | None = None
) -> None:
    """Pi's selector and ours, both with the keys of a keybindings.json holding
    ``bindings``, draw the same after each of ``keys``."""
    steps = pi_steps(
        project, None, keys, widths=WIDTHS, now_ms=NOW, current=current, bindings=bindings
    )
    resume = opened(project, current, bindings)
    resume.join_load(60)
    for step, pis in enumerate(steps):
        if step:
            press(resume, keys[step - 1])
        for width in WIDTHS:
            theirs = pis["views"][str(width)]
            ours = draw(resume, width)
            where = (step, width)
            assert ours.hints == theirs["hints"], where
            assert ours.list == theirs["list"][2:], where
            assert ours.colours == theirs["colours"], where


def opened(project: Path, current: Path, bindings: dict[str, Any] | None) -> ResumePicker:
    """Our picker in ``project``, its keys those of a keybindings.json holding ``bindings``."""
    keybindings = project.parent / "keybindings.json"
    keybindings.write_text(json.dumps(bindings or {}))
    directory = default_session_dir(project)
    return ResumePicker(
        directory,
        lambda path: None,
        cwd=cwd_filter(project, directory),
        every_folder=every_folder_root(project, directory),
        current=current,
        clock=lambda: NOW / 1000,
        keymap=KeyMap.load(keybindings),
    )


@pytest.mark.pi
def test_rows_and_hints_are_drawn_as_pi_s_selector_draws_them(home: Path) -> None:
    project = home / "project"
    current = project_sessions(default_session_dir(project), project)
    other_sessions(home / "agent" / "sessions", home)
    keys = [
        *(DOWN, CTRL_D, ESC),  # Pi's question in place of the hints, the row in red
        *(DOWN, CTRL_P, TAB),
        *[DOWN] * 20,
        *(CTRL_P, CTRL_N, TAB, CTRL_N),
        *"zzqq",  # nothing found
        *[BACKSPACE] * 4,
        *"parser",
    ]
    assert_drawn_as_pi_draws(project, current, keys)


def test_the_heads_count_the_messages_pi_s_reading_counts(home: Path) -> None:
    folder = home / "sessions"
    project_sessions(folder, home)
    for path in sorted(folder.glob("*.jsonl")):
        head = read_head(path)
        assert head is not None
        whole = read_session_info(head)
        assert whole is not None
        assert head.message_count == whole.message_count, path.name
    tools = read_head(folder / "tools.jsonl")
    assert tools is not None
    assert tools.first_message == "run the tests"


@pytest.mark.pi
def test_the_current_session_s_refusal_stands_in_place_of_the_hints(home: Path) -> None:
    project = home / "project"
    current = project_sessions(default_session_dir(project), project)
    assert_drawn_as_pi_draws(project, current, [DOWN, DOWN, CTRL_D])


#: Choosing also with Ctrl+Y, closing with Ctrl+Q only, deleting with Alt+D.
REBOUND = {
    "tui.select.confirm": ["ctrl+y", "enter"],
    "tui.select.cancel": "ctrl+q",
    "app.session.delete": "alt+d",
}


@pytest.mark.pi
def test_the_hints_and_the_delete_question_name_the_keys_bound_as_pi_s_do(home: Path) -> None:
    project = home / "project"
    current = project_sessions(default_session_dir(project), project)
    bindings = {**REBOUND, "app.session.delete": "ctrl+d"}  # the key press() sends
    assert_drawn_as_pi_draws(project, current, [DOWN, CTRL_D], bindings)
    assert_drawn_as_pi_draws(project, current, [], REBOUND)


@pytest.mark.pi
@pytest.mark.parametrize("bindings", [{}, REBOUND])
def test_the_rename_hint_names_the_keys_bound_as_pi_s_does(
    home: Path, bindings: dict[str, Any]
) -> None:
    project = home / "project"
    current = project_sessions(default_session_dir(project), project)
    steps = pi_steps(project, None, [DOWN, CTRL_R], now_ms=NOW, current=current, bindings=bindings)
    pis = next(line.strip() for line in steps[2]["rename"] if "to save" in line)
    resume = opened(project, current, bindings)
    resume.join_load(60)
    resume.picker.move(1)
    assert resume.picker.act("app.session.rename")
    assert resume.picker.question is not None
    assert resume.picker.question.hint == pis
