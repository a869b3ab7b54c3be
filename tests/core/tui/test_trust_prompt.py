"""The trust question of ``ctxmodes chat`` in a real terminal (tmux): a project with its own
``.pi`` files is asked about before the session opens; the answer decides what loads and,
unless it was for this session only, is saved in ``trust.json`` for the next start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.tmux import Tmux, ctxmodes_command, private_env

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def start_chat(work: Path, project: Path, *flags: str) -> Tmux:
    script = work / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "ok"}] * 4}))
    command = ctxmodes_command(
        "chat", "--mode", "off", "--model", f"scripted:{script}", "--cwd", str(project), *flags
    )
    return Tmux(command, private_env(work))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "clone"
    (folder / ".pi" / "prompts").mkdir(parents=True)
    (folder / ".pi" / "prompts" / "fix.md").write_text("Fix issue $1")
    (folder / "AGENTS.md").write_text("rules")
    return folder


def test_trusting_loads_the_project_and_is_remembered(tmp_path: Path, project: Path) -> None:
    tmux = start_chat(tmp_path, project)
    try:
        screen = tmux.wait("Trust project folder?")
        assert str(project) in screen
        assert "Trust parent folder" in screen
        tmux.key("Enter")  # the first answer: Trust
        screen = tmux.wait("[Prompts]")
        assert "/fix" in screen
        tmux.key("C-c")
        tmux.key("C-c")
        tmux.wait("CTXMODES-EXIT=0")
    finally:
        tmux.close()
    saved = json.loads((tmp_path / "pi" / "trust.json").read_text())
    assert saved == {str(project.resolve()): True}

    again = start_chat(tmp_path, project)
    try:
        screen = again.wait("[Prompts]")
        assert "Trust project folder?" not in screen
    finally:
        again.close()


def test_refusing_for_this_session_loads_nothing_and_saves_nothing(
    tmp_path: Path, project: Path
) -> None:
    tmux = start_chat(tmp_path, project)
    try:
        tmux.wait("Do not trust (this session only)")
        for _ in range(4):
            tmux.key("Down")
        tmux.key("Enter")
        screen = tmux.wait("[Project]")
        assert "[Prompts]" not in screen
        assert "[Context]" in screen  # context files load before trust
    finally:
        tmux.close()
    assert not (tmp_path / "pi" / "trust.json").exists()


def test_no_approve_asks_nothing(tmp_path: Path, project: Path) -> None:
    tmux = start_chat(tmp_path, project, "--no-approve")
    try:
        screen = tmux.wait("[Project]")
        assert "Trust project folder?" not in screen
    finally:
        tmux.close()
