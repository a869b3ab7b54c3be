"""``/share`` in a real terminal, ctxmodes' and the real Pi's, each answering the same
loopback model and running the same fake ``gh`` (GitHub is out of reach here): the same
``gh`` commands, the same lines on the screen (the gist ids aside: each page is its own
program's), no temporary file left behind; and the two places ctxmodes differs on purpose,
checked on the real Pi."""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from support.fake_gh import USER, FakeGh, gist_id_of, install_fake_gh
from support.pi_print import API, configure_ours, pi_agent_dir, pi_command
from support.tmux import Tmux, ctxmodes_command, private_env
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.tui.session_share import CANCELLED, NOT_INSTALLED, NOT_LOGGED_IN

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

REPLY = "ANSWER-TO-SHARE"
VIEWER = "https://viewer.example/s/"
Program = Literal["pi", "ours"]
Case = Literal["created", "viewer", "fails", "logged-out", "cancelled", "no-gh"]


@dataclass
class Shared:
    """What one program's ``/share`` showed and did."""

    #: The lines printed after the reply, stripped, blank ones left out.
    lines: list[str]
    calls: list[dict[str, Any]]
    #: What is left in the folder temporary files go to.
    left: list[Path]


def _start(program: Program, work: Path, base_url: str, env: dict[str, str]) -> Tmux:
    project = work / "project"
    project.mkdir()
    if program == "ours":
        configure_ours(work, base_url)
        command = ctxmodes_command("chat", "--mode", "off", "--model", "loop/m")
        tmux = Tmux(["sh", "-c", f"cd {project} && exec {' '.join(command)}"], env)
        tmux.wait("Press ctrl+o")
        return tmux
    pi, _ = pi_command(pi_agent_dir(work, base_url))
    tmux = Tmux(["sh", "-c", f"cd {project} && exec {' '.join(pi)} --model loop/m"], env)
    tmux.wait("Press ctrl+o")
    time.sleep(0.5)  # Pi reads keys once its first frame is drawn
    return tmux


def _environment(program: Program, work: Path, gh: FakeGh | None, case: Case) -> dict[str, str]:
    env = private_env(work)
    if program == "pi":
        env["PI_CODING_AGENT_DIR"] = str(work / "pi-agent")
        env["PI_OFFLINE"] = "1"
    env["TMPDIR"] = str(work / "tmp")
    (work / "tmp").mkdir()
    env["PATH"] = gh.path_with_gh() if gh is not None else "/usr/bin:/bin"
    if case == "viewer":
        env["PI_SHARE_VIEWER_URL"] = VIEWER
    return env


def _after_reply(screen: str) -> list[str]:
    lines = [line.strip() for line in screen.splitlines()]
    start = max(at for at, line in enumerate(lines) if line == REPLY) + 1
    shown: list[str] = []
    for line in lines[start:]:
        if line.startswith(("─", "\u203a")):  # the editor: Pi's border, ctxmodes' prompt
            break
        if line:
            shown.append(line)
    return shown


def share_with(program: Program, work: Path, case: Case) -> Shared:
    """Ask once, then ``/share`` with ``gh`` set up for ``case`` (``cancelled``: Esc while
    the gist is being made)."""
    work.mkdir()
    gh = None
    if case != "no-gh":
        gh = install_fake_gh(
            work / "gh",
            auth="logged-out" if case == "logged-out" else "logged-in",
            gist={"fails": "fails", "cancelled": "hangs"}.get(case, "created"),  # type: ignore[arg-type]
        )
    elif shutil.which("gh", path="/usr/bin:/bin") is not None:
        pytest.skip("a real gh is installed here")
    with WireServer([Reply(text_stream(API, REPLY))]) as server:
        tmux = _start(program, work, server.base_url, _environment(program, work, gh, case))
        try:
            tmux.type("question")
            tmux.key("Enter")
            tmux.wait(REPLY)
            tmux.type("/share")
            time.sleep(0.3)  # the command menu opens as it is typed
            tmux.key("Enter")
            if case == "cancelled":
                assert gh is not None
                _wait_for(lambda: gh.hanging_pid() is not None, "gh to create the gist")
                tmux.wait("Creating gist...")
                tmux.key("Escape")
                tmux.wait(CANCELLED)
            else:
                tmux.wait("Gist: " if case in ("created", "viewer") else "Error: ")
            # The folder goes once gh has ended (at once, or after a stop).
            _wait_for(lambda: not any((work / "tmp").iterdir()), "the temporary folder to go")
            screen = tmux.screen()
        finally:
            tmux.close()
    return Shared(_after_reply(screen), gh.calls() if gh else [], list((work / "tmp").iterdir()))


def _wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 20
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _gist_ids_hidden(lines: list[str]) -> list[str]:
    return [re.sub(r"[0-9a-f]{32}", "<id>", line) for line in lines]


def _commands(shared: Shared) -> list[list[str]]:
    """The ``gh`` commands run, the page's folder (random) left out."""
    return [
        [Path(arg).name if "/" in arg else arg for arg in call["argv"]] for call in shared.calls
    ]


def test_share_in_a_real_terminal(tmp_path: Path) -> None:
    shared = share_with("ours", tmp_path / "ours", "created")
    (gist,) = [call for call in shared.calls if call["argv"][:2] == ["gist", "create"]]
    assert REPLY in gist["text"]
    assert shared.lines == [f"Gist: https://gist.github.com/{USER}/{gist_id_of(gist['text'])}"]
    assert _commands(shared) == [
        ["auth", "status"],
        ["gist", "create", "--public=false", "session.html"],
    ]
    assert shared.left == []


@pytest.mark.pi
@pytest.mark.parametrize("case", ["viewer", "fails", "logged-out", "cancelled"])
def test_share_shows_what_pis_shows(tmp_path: Path, case: Case) -> None:
    pi = share_with("pi", tmp_path / "pi", case)
    ours = share_with("ours", tmp_path / "ours", case)
    assert pi.lines, "the real Pi printed nothing after the reply"
    assert _gist_ids_hidden(ours.lines) == _gist_ids_hidden(pi.lines)
    assert _commands(ours) == _commands(pi)
    assert ours.left == pi.left == []
    if case == "viewer":
        # The gist id in each URL is that of the page the program made.
        for shared in (pi, ours):
            gist_id = gist_id_of(shared.calls[-1]["text"])
            assert shared.lines == [
                f"Share URL: {VIEWER}#{gist_id}",
                f"Gist: https://gist.github.com/{USER}/{gist_id}",
            ]


@pytest.mark.pi
def test_without_a_viewer_ctxmodes_prints_only_the_gist(tmp_path: Path) -> None:
    """Pi prints its own viewer's URL, which would not render ctxmodes' page: ctxmodes
    prints the gist's line alone."""
    pi = share_with("pi", tmp_path / "pi", "created")
    ours = share_with("ours", tmp_path / "ours", "created")
    pi_viewer, pi_gist = pi.lines
    assert pi_viewer.startswith("Share URL: https://pi.dev/session/#")
    assert _gist_ids_hidden(ours.lines) == _gist_ids_hidden([pi_gist])


@pytest.mark.pi
def test_without_gh_ctxmodes_says_it_is_not_installed(tmp_path: Path) -> None:
    """Pi 0.85 means to say that gh is not installed, but its check never sees gh fail to
    start, and it says gh is not logged in; ctxmodes says what Pi meant."""
    pi = share_with("pi", tmp_path / "pi", "no-gh")
    ours = share_with("ours", tmp_path / "ours", "no-gh")
    assert pi.lines == [f"Error: {NOT_LOGGED_IN}"]
    assert ours.lines == [f"Error: {NOT_INSTALLED}"]
    assert ours.left == pi.left == []
