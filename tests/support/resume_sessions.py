"""Session files for the resume picker's comparisons with Pi's session selector, and the
runner of ``pi_session_selector.mjs``, which drives Pi's own selector over them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ctxmodes.tui.resume import VISIBLE_SESSIONS, ResumePicker
from ctxmodes.tui.text_wrap import wrap_words
from support.pi_oracle import run_pi_script

SCRIPT = Path(__file__).with_name("pi_session_selector.mjs")
#: The columns Pi's selector is judged in unless a view asks for others.
WIDTH = 240
#: When the sessions' messages were written, in milliseconds: Pi orders by these.
T0 = 1_767_000_000_000

#: What a terminal sends for the keys the comparisons press.
TAB = "\t"
CTRL_S = "\x13"
CTRL_N = "\x0e"
CTRL_P = "\x10"
CTRL_D = "\x04"
ESC = "\x1b"
BACKSPACE = "\x7f"
UP = "\x1b[A"
DOWN = "\x1b[B"
#: The picker's action for each key that has one, with Pi's default keys.
_ACTIONS = {
    TAB: "tui.input.tab",
    CTRL_S: "app.session.toggleSort",
    CTRL_N: "app.session.toggleNamedFilter",
    CTRL_P: "app.session.togglePath",
    CTRL_D: "app.session.delete",
}


def press(resume: ResumePicker, key: str) -> None:
    """``key`` as the session's picker takes it (Esc answers a question), then the files'
    loading waited for, as Pi's selector has them all before it draws."""
    picker = resume.picker
    if key in _ACTIONS:
        assert picker.act(_ACTIONS[key])
    elif key == ESC:
        assert picker.question is not None
        picker.dismiss()
    elif key == BACKSPACE:
        picker.backspace()
    elif key in (UP, DOWN):
        picker.move(-1 if key == UP else 1)
    else:
        picker.type(key)
    resume.join_load(60)


def write_session(
    path: Path,
    session_id: str,
    cwd: str,
    messages: list[tuple[str, str, int]],
    *,
    name: str | None = None,
    parent: Path | None = None,
    mtime: int | None = None,
) -> Path:
    """A session file of ``messages`` (role, text, time), named ``name``, forked from
    ``parent``; its file time ``mtime`` (seconds), which Pi does not order by."""
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": cwd,
    }
    if parent is not None:
        header["parentSession"] = str(parent)
    lines = [header]
    previous = None
    for number, (role, text, when) in enumerate(messages):
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        entry_id = f"{number:08x}"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": previous,
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": role, "content": content, "timestamp": when},
            }
        )
        previous = entry_id
    if name is not None:
        lines.append({"type": "session_info", "id": "ffffffff", "parentId": previous, "name": name})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def session_id(number: int) -> str:
    return f"0190{number:04x}-0000-7000-8000-000000000000"


def project_sessions(folder: Path, cwd: Path) -> None:
    """This project's sessions: named and not, a fork, one with nothing said, one whose file
    time disagrees with its messages', one whose header names another folder, and files
    that are not sessions."""
    first = write_session(
        folder / "a.jsonl",
        session_id(1),
        str(cwd),
        [
            ("user", "fix the parser bug", T0 + 100),
            ("assistant", "The parser handles it", T0 + 110),
        ],
        name="parser work",
    )
    write_session(
        folder / "b.jsonl",
        session_id(2),
        str(cwd),
        [("user", "write docs for the CLI 🙂", T0 + 200), ("assistant", "Added usage", T0 + 210)],
    )
    write_session(
        folder / "c.jsonl",
        session_id(3),
        str(cwd),
        [("user", "fix the parser bug", T0 + 100), ("user", "also the lexer", T0 + 300)],
        parent=first,
    )
    write_session(
        folder / "d.jsonl",
        session_id(4),
        str(cwd),
        [("user", "Refactor   the\n\nparser entirely", T0 + 50)],
        mtime=2_000_000_000,  # the newest file, the oldest talk
    )
    write_session(folder / "e.jsonl", session_id(5), str(cwd), [], name="  ")
    write_session(folder / "f.jsonl", session_id(6), "/somewhere/else", [("user", "odd", T0 + 5)])
    (folder / "broken.jsonl").write_text("not json\n")
    (folder / "notes.txt").write_text("not a session\n")


def other_sessions(root: Path, tmp_path: Path) -> None:
    """Other projects' folders in Pi's sessions folder, one of them a link."""
    write_session(
        root / "--other--" / "g.jsonl",
        session_id(7),
        str(tmp_path / "other"),
        [("user", "parse logs with regex", T0 + 250)],
        name="logs",
    )
    write_session(
        root / "--other--" / "h.jsonl",
        session_id(8),
        str(tmp_path / "other"),
        [("user", "deploy gpt4 to staging", T0 + 150)],
    )
    linked = write_session(
        tmp_path / "elsewhere" / "i.jsonl",
        session_id(9),
        str(tmp_path / "linked"),
        [("assistant", "a linked session's parser", T0 + 275)],
    )
    (root / "--linked--").symlink_to(linked.parent)


def pi_steps(
    cwd: Path,
    session_dir: Path | None,
    keys: list[str],
    *,
    widths: list[int] | None = None,
    now_ms: int | None = None,
    current: Path | None = None,
    bindings: dict[str, Any] | None = None,
) -> Any:
    """What Pi's selector, opened in ``cwd`` on ``session_dir`` (Pi's own folder for ``cwd``
    when ``None``), shows before the first of ``keys`` and after each; with ``widths``, as
    drawn in each of them at the clock ``now_ms``, ``current`` being the session run, with
    the keys of a keybindings.json holding ``bindings``."""
    request: dict[str, Any] = {
        "cwd": str(cwd),
        "sessionDir": None if session_dir is None else str(session_dir),
        "width": WIDTH,
        "keys": keys,
        "widths": widths or [],
    }
    if now_ms is not None:
        request["now"] = now_ms
    if current is not None:
        request["current"] = str(current)
    if bindings is not None:
        request["bindings"] = bindings
    return run_pi_script(SCRIPT, json.dumps(request))["steps"]


#: Our row styles by the name of the colour Pi draws a row's message in.
_COLOURS = {"error": "picker.error", "accent": "picker.active", "warning": "picker.warning"}


@dataclass(frozen=True)
class Drawn:
    """What the resume picker draws in some width, as the mjs script reports Pi's: the two
    lines under the title, the lines under the query (the rows, then the scroll line or the
    empty-list line), and the colour each row's message is drawn in."""

    hints: list[str]
    list: list[str]
    colours: list[str | None]


def draw(resume: ResumePicker, width: int) -> Drawn:
    """``resume`` drawn in ``width`` columns, split as :class:`Drawn` says."""
    picker = resume.picker
    lines: list[list[tuple[str, str]]] = [[]]
    for fragment in picker.fragments(width):
        style, text = fragment[0], fragment[1]
        for number, piece in enumerate(text.split("\n")):
            if number:
                lines.append([])
            lines[-1].append((style, piece))
    title_lines = len(wrap_words(picker.title, width - 1).splitlines())
    texts = ["".join(text for _, text in line).rstrip() for line in lines]
    hints = texts[title_lines : title_lines + 2]
    shown = lines[title_lines + 3 :][: min(len(picker.rows()), VISIBLE_SESSIONS)]
    colours: list[str | None] = []
    for line in shown:
        message = next(
            (style.split() for style, _ in line if "class:picker.session" in style.split()), []
        )
        colours.append(
            next((name for name, ours in _COLOURS.items() if f"class:{ours}" in message), None)
        )
    return Drawn(hints, texts[title_lines + 3 :], colours)
