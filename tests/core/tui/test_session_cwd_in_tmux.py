"""A stored session runs in the working directory it records, as in Pi: opened from another
project, its tools run in its own; when that directory is gone (a project moved or removed),
the session asks before continuing it in the current one, at start-up and on ``/resume``, and
a cancelled question leaves the file as it was. An id only another project's sessions hold
asks whether to fork that session here, as Pi asks. In a real terminal (tmux)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.tmux import Tmux, ctxmodes_command, private_env

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

#: Each prompt runs `pwd` in the bash tool, then answers.
SCRIPT = {
    "responses": [
        {"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]},
        {"text": "looked"},
    ]
    * 2
}
QUESTION = "This session's working directory no longer exists"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for folder in ("here", "there"):
        (tmp_path / folder).mkdir()
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    return tmp_path


def _stored(work: Path, name: str, cwd: Path) -> Path:
    path = work / f"{name}.jsonl"
    header = {"type": "session", "version": 3, "id": name, "timestamp": "t", "cwd": str(cwd)}
    path.write_text(json.dumps(header) + "\n")
    return path


def _chat(work: Path, session: Path) -> Tmux:
    command = ctxmodes_command(
        "chat", "--model", f"scripted:{work / 'script.json'}", "--session", str(session)
    )
    return Tmux(["env", "-C", str(work / "here"), *command], private_env(work))


def _ran_pwd_in(tmux: Tmux, directory: Path) -> None:
    answered = tmux.screen().count("looked")  # a fork's copy replays an answer first
    tmux.type("where are we")
    tmux.key("Enter")
    screen = tmux.until(lambda screen: screen.count("looked") > answered)
    ran = screen[screen.rindex("where are we") :]
    assert f"\n  {directory}\n" in ran, screen[-2000:]


def test_a_session_of_another_project_runs_where_it_records(work: Path) -> None:
    session = _stored(work, "other", work / "there")
    tmux = _chat(work, session)
    try:
        tmux.wait("ctrl+o")
        _ran_pwd_in(tmux, work / "there")
    finally:
        tmux.close()


def test_a_session_whose_directory_is_gone_continues_here_once_confirmed(work: Path) -> None:
    session = _stored(work, "moved", work / "gone")
    header = session.read_text()
    tmux = _chat(work, session)
    try:
        screen = tmux.wait(QUESTION)
        assert f"{work / 'gone'}\n" in screen
        assert f"Continue it in the current directory?\n{work / 'here'}\n" in screen
        tmux.key("Enter")
        tmux.wait("ctrl+o")
        _ran_pwd_in(tmux, work / "here")
    finally:
        tmux.close()
    # The file keeps the directory it recorded: a session file is never rewritten.
    assert session.read_text().startswith(header)


def test_cancelling_the_question_leaves_the_session_file_as_it_was(work: Path) -> None:
    session = _stored(work, "moved", work / "gone")
    before = session.read_bytes()
    tmux = _chat(work, session)
    try:
        tmux.wait(QUESTION)
        tmux.key("Escape")
        tmux.wait("CTXMODES-EXIT=0")
    finally:
        tmux.close()
    assert session.read_bytes() == before


def test_resume_asks_too_and_continues_in_the_current_sessions_directory(work: Path) -> None:
    current = _stored(work, "current", work / "there")
    moved = _stored(work, "moved", work / "gone")
    tmux = _chat(work, current)
    try:
        tmux.wait("ctrl+o")
        tmux.type(f"/resume {moved}")
        tmux.key("Enter")
        screen = tmux.wait(QUESTION)
        assert f"Continue it in {work / 'there'}?" in screen
        tmux.key("Down", "Enter")  # Cancel
        tmux.wait("Resume cancelled")
        tmux.type(f"/resume {moved}")
        tmux.key("Enter")
        tmux.wait(QUESTION)
        tmux.key("Enter")
        tmux.wait("Resumed session moved")
        _ran_pwd_in(tmux, work / "there")
    finally:
        tmux.close()


def _session_of(work: Path, project: Path) -> Path:
    """A session made in ``project`` by print mode, in Pi's folder for it."""
    done = subprocess.run(
        ctxmodes_command("run", "--model", f"scripted:{work / 'script.json'}", "first"),
        cwd=project,
        env=private_env(work),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "looked" in done.stdout
    [path] = (work / "pi" / "sessions").glob("*/*.jsonl")
    return path


def test_an_id_of_another_project_is_forked_here_once_confirmed(work: Path) -> None:
    source = _session_of(work, work / "there")
    before = source.read_bytes()
    short = source.stem.rpartition("_")[2][:8]
    command = ctxmodes_command(
        "chat", "--model", f"scripted:{work / 'script.json'}", "--session", short
    )
    cancelled = Tmux(["env", "-C", str(work / "here"), *command], private_env(work))
    try:
        screen = cancelled.wait("Fork it into the current directory?")
        assert f"Session {short} belongs to another project:\n{work / 'there'}\n" in screen
        cancelled.key("Escape")
        cancelled.wait("Aborted.\nCTXMODES-EXIT=0")
    finally:
        cancelled.close()
    forked = Tmux(["env", "-C", str(work / "here"), *command], private_env(work))
    try:
        forked.wait("Fork it into the current directory?")
        forked.key("Enter")
        forked.wait("ctrl+o")
        _ran_pwd_in(forked, work / "here")
    finally:
        forked.close()
    assert source.read_bytes() == before
    [copy] = [path for path in (work / "pi" / "sessions").glob("*/*.jsonl") if path != source]
    assert json.loads(copy.read_text().splitlines()[0])["cwd"] == str(work / "here")
