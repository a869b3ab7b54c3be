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


CTRL_C, CTRL_G, CTRL_K, CTRL_N, CTRL_O, CTRL_Y = "\x03", "\x07", "\x0b", "\x0e", "\x0f", "\x19"
ESC = "\x1b"


def test_selection_keys_follow_keybindings_json(sessions: Path, tmp_path: Path) -> None:
    """Pi's ``tui.select.*`` keys moved: the old ones do nothing, Enter still chooses as Pi's
    search field submits with it, and Ctrl+N, bound to ↓ too, filters the named sessions (of
    which there are none) as Pi's session selector checks its own keys first. Esc sent
    with the key after it is that key with Alt, which does nothing here, as in Pi."""
    bindings = {
        "tui.select.up": "ctrl+k",
        "tui.select.down": ["ctrl+y", "ctrl+n"],
        "tui.select.confirm": "ctrl+o",
        "tui.select.cancel": "ctrl+g",
    }
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps(bindings))
    rows = listed(sessions)
    assert picked(sessions, CTRL_Y * 3 + CTRL_K + CTRL_O) == rows[2]
    assert picked(sessions, "\x1b[B" + CTRL_Y + ENTER) == rows[1]
    assert picked(sessions, CTRL_C + CTRL_Y + ESC + CTRL_Y + CTRL_O) == rows[1]
    assert picked(sessions, CTRL_C + CTRL_Y + CTRL_Y + CTRL_O) == rows[2]
    assert picked(sessions, CTRL_Y + CTRL_G) is None
    assert picked(sessions, CTRL_N + CTRL_O) is None
    assert picked(sessions, CTRL_N + CTRL_N + CTRL_Y + CTRL_O) == rows[1]


def test_backspace_follows_keybindings_json(sessions: Path, tmp_path: Path) -> None:
    """``tui.editor.deleteCharBackward`` moved to Ctrl+K takes back what was typed; the
    old Backspace is no longer bound."""
    bindings = {"tui.editor.deleteCharBackward": "ctrl+k"}
    (tmp_path / "agent" / "keybindings.json").write_text(json.dumps(bindings))
    rows = listed(sessions)
    assert picked(sessions, "zzz" + CTRL_K * 3 + "\x1b[B" + ENTER) == rows[1]
    assert picked(sessions, "zzz" + "\x7f" * 3 + "\x1b[B" + ENTER) is None
