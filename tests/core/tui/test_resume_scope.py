"""The resume picker's scopes and search, judged by the real Pi: ``pi_session_selector.mjs``
drives Pi's own session selector over the same session files with the same keys, and after
every key the header, the sessions listed (in order, with their tree), the selected row,
whether rows name each session's folder and the empty-list line must be Pi's. Tab switches
between this folder's sessions and every folder's (Pi's sessions folder, or a folder every
project shares, whole); typing searches as Pi does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.resume_sessions import (
    BACKSPACE,
    CTRL_N,
    CTRL_P,
    CTRL_S,
    DOWN,
    T0,
    TAB,
    UP,
    WIDTH,
    draw,
    other_sessions,
    pi_steps,
    press,
    project_sessions,
    session_id,
    write_session,
)

from ctxmodes.session.paths import cwd_filter, default_session_dir
from ctxmodes.tui.resume import ResumePicker, every_folder_root
from ctxmodes.tui.resume_rows import shorten_home


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


def assert_as_pi_s(resume: ResumePicker, pis: dict[str, Any], step: int) -> None:
    picker = resume.picker
    title_line, hint_first, hint_second = pis["header"]
    title = title_line.split("  ")[0]
    assert picker.title == f"{title}  {title_line[len(title) :].strip()}", step
    assert draw(resume, WIDTH).hints == [hint_first, hint_second], step
    rows = picker.rows()
    ours = [(str(row.key), row.fragments[0][1]) for row in rows]
    assert ours == [(row["path"], row["tree"]) for row in pis["rows"]], step
    assert picker.selected == pis["selected"], step
    assert (resume.scope == "all") == pis["showCwd"], step
    folders = {head.path: head.cwd for head in resume.heads}
    for row in rows:
        right = row.fragments[-1][1]  # the file, the folder, the count and the age
        assert (f"{shorten_home(folders[row.key])} " in right) == pis["showCwd"], step
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
        # After the first message, the folder, cut with ... where the terminal ends.
        drawn = "".join(text for _, text in row.fragments)
        right = drawn.split("their work", 1)[1].strip().removesuffix("...")
        folder = f"{tmp_path / 'their-project'} "
        assert len(right) > 10, right
        assert folder.startswith(right) or right.startswith(folder), right
        await t.type(TAB)
        await t.until(lambda: picker.title.startswith("Resume Session (Current Folder)"), "back")
        assert theirs not in [row.key for row in picker.rows()]

    run_terminal(agent, scenario)
