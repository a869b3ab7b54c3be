"""The footer beside the real Pi's, each program in a real terminal: the same folder and git
branch (and a branch switched from another terminal shown by both), and the same token
figures and cost after the same replies."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.beside_pi import (
    PROGRAMS,
    ask_in_turn,
    open_terminal,
    usage_reply,
    write_loop_models,
)
from support.pi_print import pi_terminal
from support.tmux import Tmux, ctxmodes_command, private_env
from support.wire_server import WireServer

pytestmark = [
    pytest.mark.slow,  # two real terminals, end to end
    pytest.mark.pi,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]


def git(folder: Path, *arguments: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", *identity, *arguments], cwd=folder, check=True, capture_output=True)


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
    git(project, "commit", "--quiet", "--allow-empty", "-m", "first")
    theirs = pi_terminal(project, tmp_path / "pi-agent", tmp_path)
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


#: Pi's token figures and the cost (none for a free model), where each footer writes them.
TOKEN_FIGURES = re.compile(r"↑\S+(?: (?:↓|R|W|CH)\S+)*(?: \$\d+\.\d{3})?")
#: What the loopback model says it used on each reply: prompt (of it, read from the cache),
#: and completion tokens.
SPENT = [(12_000, 8_000, 340), (25_000, 20_000, 1_250)]


def _token_figures(screen: str) -> str:
    found = TOKEN_FIGURES.findall(screen)
    return found[-1] if found else ""


def _last_figures(tmux: Tmux) -> str:
    """The footer's figures once they count the last reply."""
    return _token_figures(tmux.until(lambda screen: "↓1.6k" in _token_figures(screen)))


@pytest.mark.parametrize(
    ("prices", "expected"),
    [
        (
            {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "↑9.0k ↓1.6k R28k CH80.0% $",
        ),
        # A free model (a local server, say): the figures, and no ``$0.000`` after them.
        ({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "↑9.0k ↓1.6k R28k CH80.0%"),
    ],
    ids=["priced", "free"],
)
def test_both_count_the_same_tokens_and_cost(
    tmp_path: Path, prices: dict[str, float], expected: str
) -> None:
    replies = [usage_reply(f"answer {n}", *spent) for n, spent in enumerate(SPENT)]
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    figures: dict[str, str] = {}
    for program in PROGRAMS:
        with WireServer(list(replies)) as server:
            write_loop_models(agent, server.base_url, [{"id": "m", "cost": prices}])
            tmux = open_terminal(program, project, agent, tmp_path, "--model", "loop/m")
            try:
                ask_in_turn(tmux, len(SPENT))
                figures[program] = _last_figures(tmux)
            finally:
                tmux.close()
    assert figures["ours"] == figures["pi"]
    assert figures["pi"].startswith(expected)
    assert ("$" in figures["pi"]) == expected.endswith("$")
