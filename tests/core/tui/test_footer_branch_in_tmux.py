"""The footer's folder line beside the real Pi's, in a git checkout: the same folder and
branch, and a branch switched from another terminal shown by both."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.pi_print import pi_command
from support.tmux import Tmux, ctxmodes_command, private_env

pytestmark = [
    pytest.mark.slow,  # two real terminals, end to end
    pytest.mark.pi,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


def git(folder: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=folder, check=True, capture_output=True)


def folder_line(tmux: Tmux) -> str:
    """The footer's first line: the one naming the project folder (``~/project …``)."""
    lines = [line.strip() for line in tmux.visible().splitlines()]
    return next((line for line in lines if line.startswith("~/project")), "")


def wait_for_line(tmux: Tmux, expected: str) -> None:
    tmux.until(lambda _: folder_line(tmux) == expected)


def test_both_name_the_branch_and_follow_a_switch_made_elsewhere(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "--quiet", "--initial-branch", "feature/footer")
    git(
        project,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@e",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "1",
    )
    pi, environment = pi_command(tmp_path / "pi-agent", {"HOME": str(tmp_path)})
    keep = ("PI_CODING_AGENT_DIR", "PI_OFFLINE", "HOME", "PATH")
    theirs = Tmux(
        ["env", "-C", str(project), *pi],
        {**{key: environment[key] for key in keep}, "TERM": "xterm-256color"},
    )
    ours = Tmux(["env", "-C", str(project), *ctxmodes_command("chat")], private_env(tmp_path))
    try:
        for terminal in (theirs, ours):
            wait_for_line(terminal, "~/project (feature/footer)")
        git(project, "checkout", "--quiet", "--detach")
        for terminal in (theirs, ours):
            wait_for_line(terminal, "~/project (detached)")
        git(project, "checkout", "--quiet", "-b", "release")
        for terminal in (theirs, ours):
            wait_for_line(terminal, "~/project (release)")
    finally:
        theirs.close()
        ours.close()
