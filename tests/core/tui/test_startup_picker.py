"""``ctxmodes chat -r``'s picker, driven through a pipe as a terminal would drive it: Pi's
``tui.select.pageUp``/``pageDown`` keys page it, as they page the session's own pickers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from support.session_dirs import write_sessions

from ctxmodes.session.paths import cwd_filter
from ctxmodes.tui.resume import ResumePicker
from ctxmodes.tui.startup_picker import pick_session

PAGE_DOWN = "\x1b[6~"
PAGE_UP = "\x1b[5~"
CTRL_F = "\x06"
ENTER = "\r"


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """25 sessions of ``/project`` under a Pi agent folder of the test's own."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "agent").mkdir()
    directory = tmp_path / "sessions"
    write_sessions(directory, 25)
    return directory


def picked(directory: Path, keys: str) -> Path | None:
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(keys)
        return pick_session(directory, Path("/project"))


def listed(directory: Path) -> list[Path]:
    """The rows in the picker's order, with its page size."""
    picker = ResumePicker(directory, lambda path: None, cwd=cwd_filter(Path("/project"), directory))
    return [row.key for row in picker.picker.rows()]


def test_page_keys_move_a_page_and_stop_at_the_ends(sessions: Path) -> None:
    rows = listed(sessions)
    assert len(rows) == 25
    assert picked(sessions, PAGE_DOWN + ENTER) == rows[10]
    assert picked(sessions, PAGE_DOWN * 5 + ENTER) == rows[-1]
    assert picked(sessions, PAGE_DOWN * 2 + PAGE_UP + ENTER) == rows[10]
    assert picked(sessions, PAGE_UP + ENTER) == rows[0]


def test_page_keys_follow_keybindings_json(sessions: Path, tmp_path: Path) -> None:
    bindings = {"tui.select.pageDown": "ctrl+f"}
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps(bindings))
    rows = listed(sessions)
    assert picked(sessions, CTRL_F + ENTER) == rows[10]
    assert picked(sessions, PAGE_DOWN + ENTER) == rows[0]  # no longer bound
