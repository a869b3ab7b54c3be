"""The resume picker's scopes and search, judged by the real Pi: ``pi_session_selector.mjs``
drives Pi's own session selector over the same session files with the same keys, and after
every key the header, the sessions listed (in order, with their tree), the selected row,
whether rows name each session's folder and the empty-list line must be Pi's. Tab switches
between this folder's sessions and every folder's (Pi's sessions folder, or a folder every
project shares, whole); typing searches as Pi does."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.session.paths import cwd_filter, default_session_dir
from ctxmodes.tui.resume import ResumePicker, every_folder_root
from ctxmodes.tui.resume_rows import shorten_home

SCRIPT = Path(__file__).parents[2] / "support" / "pi_session_selector.mjs"
TAB = "\t"
CTRL_S = "\x13"
CTRL_N = "\x0e"
CTRL_P = "\x10"
BACKSPACE = "\x7f"
UP = "\x1b[A"
DOWN = "\x1b[B"
WIDTH = 240
#: When the sessions' messages were written, in milliseconds: Pi orders by these.
T0 = 1_767_000_000_000


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


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pi's agent folder under a home of its own, with this project's sessions and others'."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    project_sessions(default_session_dir(project), project)
    other_sessions(tmp_path / "agent" / "sessions", tmp_path)
    return tmp_path


def press(resume: ResumePicker, key: str) -> None:
    """``key`` as the session's picker takes it."""
    picker = resume.picker
    actions = {
        TAB: "tui.input.tab",
        CTRL_S: "app.session.toggleSort",
        CTRL_N: "app.session.toggleNamedFilter",
        CTRL_P: "app.session.togglePath",
    }
    if key in actions:
        assert picker.act(actions[key])
    elif key == BACKSPACE:
        picker.backspace()
    elif key in (UP, DOWN):
        picker.move(-1 if key == UP else 1)
    else:
        picker.type(key)
    resume.join_load(60)


def assert_as_pi_s(resume: ResumePicker, pis: dict[str, Any], step: int) -> None:
    picker = resume.picker
    title_line, hint_first, hint_second = pis["header"]
    title = title_line.split("  ")[0]
    assert picker.title == f"{title}  {title_line[len(title) :].strip()}", step
    assert f"{hint_first} · {hint_second}" in picker.hint, step
    rows = picker.rows()
    ours = [(str(row.key), row.fragments[0][1].split("  ", 1)[1]) for row in rows]
    assert ours == [(row["path"], row["tree"]) for row in pis["rows"]], step
    assert picker.selected == pis["selected"], step
    assert (resume.scope == "all") == pis["showCwd"], step
    folders = {head.path: head.cwd for head in resume.heads}
    for row in rows:
        shown = "".join(text for _, text in row.fragments)
        assert (f"  {shorten_home(folders[row.key])}" in shown) == pis["showCwd"], step
    if pis["empty"] is not None:
        assert not rows
        assert picker.empty == pis["empty"], step


KEY_CASES = {
    "scope, order and name filter": [
        *(TAB, TAB, CTRL_S, TAB, CTRL_S, CTRL_S, CTRL_N, TAB, CTRL_N),
        *(DOWN, DOWN, DOWN, TAB, UP, TAB),
    ],
    "fuzzy words and phrases": [
        *"parser",
        TAB,
        *[BACKSPACE] * 6,
        *'"the parser"',
        *(CTRL_S, CTRL_S, TAB),
        *" bug",
    ],
    "regular expressions": [
        *"re:pars(e|ing)",
        *(TAB, CTRL_S),
        *[BACKSPACE] * 10,
        *"(",
        *(CTRL_N, TAB, CTRL_N),
    ],
    "an open quote and an empty pattern": [*'"open the', TAB, *[BACKSPACE] * 9, *"re:", TAB],
    "digits and letters swapped, and paths": [*"4gpt", TAB, CTRL_P, *[BACKSPACE] * 4, DOWN],
}


def pi_steps(cwd: Path, session_dir: Path | None, keys: list[str]) -> Any:
    request = {
        "cwd": str(cwd),
        "sessionDir": None if session_dir is None else str(session_dir),
        "width": WIDTH,
        "keys": keys,
    }
    return run_pi_script(SCRIPT, json.dumps(request))["steps"]


def assert_keys_show_what_pi_s_show(
    project: Path, session_dir: Path | None, keys: list[str]
) -> None:
    """Pi's selector and ours, opened in ``project`` on the same files (Pi's own sessions
    folder when ``session_dir`` is None), agree before the first key and after each."""
    steps = pi_steps(project, session_dir, keys)
    directory = default_session_dir(project) if session_dir is None else session_dir
    resume = ResumePicker(
        directory,
        lambda path: None,
        cwd=cwd_filter(project, directory),
        every_folder=every_folder_root(project, directory),
    )
    resume.join_load(60)
    assert_as_pi_s(resume, steps[0], 0)
    for step, key in enumerate(keys, start=1):
        press(resume, key)
        assert_as_pi_s(resume, steps[step], step)


@pytest.mark.pi
@pytest.mark.parametrize("case", KEY_CASES)
def test_each_key_shows_what_pi_s_selector_shows(home: Path, case: str) -> None:
    assert_keys_show_what_pi_s_show(home / "project", None, KEY_CASES[case])


@pytest.mark.pi
def test_in_a_folder_every_project_shares_all_lists_that_folder_whole(home: Path) -> None:
    project = home / "project"
    shared = home / "shared"
    project_sessions(shared, project)
    write_session(
        shared / "x.jsonl", session_id(20), str(home / "other"), [("user", "the parser", T0 + 9)]
    )
    assert_keys_show_what_pi_s_show(project, shared, [TAB, *"parser", TAB, CTRL_S, TAB])


def test_the_header_counts_the_files_read_until_all_are(home: Path) -> None:
    project = home / "project"
    directory = default_session_dir(project)
    resume = ResumePicker(directory, lambda path: None, every_folder=directory.parent)
    resume.join_load(60)
    assert "◉ Current Folder | ○ All" in resume.picker.title
    resume.picker.act("tui.input.tab")
    # Listed at once from the heads, every folder's, while the files are read.
    assert {head.path.parent.name for head in resume.heads} == {
        directory.name,
        "--other--",
        "--linked--",
    }
    resume.join_load(60)
    assert "○ Current Folder | ◉ All" in resume.picker.title
    assert resume.picker.title.startswith("Resume Session (All)")


def test_in_the_session_tab_lists_every_folder_s_sessions_and_back(tmp_path: Path) -> None:
    from support.agents import make_agent
    from support.terminal import ENTER, run_terminal

    agent = make_agent(tmp_path, [{"text": "hi"}])
    theirs = write_session(
        tmp_path / "sessions" / "theirs.jsonl",
        session_id(30),
        str(tmp_path / "their-project"),
        [("user", "their work", T0)],
    )

    async def scenario(t: Any) -> None:
        await t.type("hello" + ENTER)
        await t.idle()
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        picker = t.session.picker
        await t.until(lambda: "◉ Current Folder | ○ All" in picker.title, "this folder's list")
        assert theirs not in [row.key for row in picker.rows()]
        await t.type(TAB)
        await t.until(lambda: "○ Current Folder | ◉ All" in picker.title, "every folder's list")
        row = next(row for row in picker.rows() if row.key == theirs)
        assert "their-project" in "".join(text for _, text in row.fragments)
        await t.type(TAB)
        await t.until(lambda: picker.title.startswith("Resume Session (Current Folder)"), "back")
        assert theirs not in [row.key for row in picker.rows()]

    run_terminal(agent, scenario)
