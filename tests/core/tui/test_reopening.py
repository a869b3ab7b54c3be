"""Reopening a session in a real terminal (tmux): the first minute of a new user's day. Start
``ctxmodes chat --mode tree``, work through a rollover, quit, come back with ``ctxmodes -c``:
the session is still Tree, its active branch is printed into the scrollback (the archived
window one line), the footer shows what it showed before quitting, and starting and quitting
without a prompt leaves no file."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.tmux import Tmux, private_env

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

PROMPT = "\u203a "  # how the transcript shows a user message
FOOTER = re.compile(
    r"scripted/scripted • (\w+) • window (\d+) • (\S+ / \S+ left) • ([↑↓RWC]\S+(?: [↑↓RWC]\S+)*)"
)
SCRIPT = {
    "responses": [
        {
            "text": "Picking a code name: AMBER. Rolling over.",
            "tool_calls": [{"name": "new_context"}],
            "usage": {"totalTokens": 2100},
        },
        {"text": "Window one is open.", "usage": {"totalTokens": 2300}},
        {
            "text": "Changelog written.",
            "tool_calls": [{"name": "bash", "arguments": {"command": "echo done"}}],
            "usage": {"totalTokens": 2500},
        },
        {"text": "All done.", "usage": {"totalTokens": 2600}},
    ],
    "summaries": ["## Goal\nPick the release code name\n\n## Progress\n- chose AMBER"],
}


def _ctxmodes(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("ctxmodes")), *args]


def _footer(screen: str) -> tuple[str, ...]:
    found = FOOTER.findall(screen)
    assert found, screen[-2000:]
    return found[-1]


def _quit(tmux: Tmux) -> str:
    tmux.key("C-c")
    tmux.key("C-c")
    return tmux.wait("CTXMODES-EXIT=")


def _sessions(work: Path) -> list[Path]:
    return sorted((work / "pi").glob("sessions/*/*.jsonl"))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    return tmp_path


def test_the_first_minute_tree_session_reopened_with_c(work: Path) -> None:
    model = f"scripted:{work / 'script.json'}"
    project = work / "project"
    first = Tmux(
        _ctxmodes("chat", "--mode", "tree", "--model", model, "--cwd", str(project)),
        private_env(work),
    )
    try:
        first.wait("scripted/scripted")
        first.type("Prepare the release")
        first.key("Enter")
        first.wait("Window one is open.")
        first.type("Write the changelog")
        first.key("Enter")
        before = first.wait("All done.")
        first.wait("• tree • window 1")
        # The footer as the session ends: a screen read earlier may predate the last usage.
        footer_before = _footer(_quit(first))
    finally:
        first.close()
    (session,) = _sessions(work)
    env = private_env(work)
    # `ctxmodes -c` at the top level, from the project directory, without --mode.
    command = ["env", "-C", str(project), *_ctxmodes("-c")]
    second = Tmux(command, {**env, "CTXMODES_MODEL": model})
    try:
        screen = second.wait("left •")
        assert "mode tree" in screen
        assert "window 0 archived · 4 entries · Pick the release code name" in screen
        assert "The user explored a different conversation branch" not in screen
        for shown in ("Window one is open.", PROMPT + "Write the changelog", "→ $ ", "All done."):
            assert shown in screen
        assert _footer(screen) == footer_before
        assert "Prepare the release" not in screen.split("mode tree")[-1], (
            "the archived window's prompt is behind its one line"
        )
        # A new process replays the script from its start: Tree rolls over again.
        second.type("Go on")
        second.key("Enter")
        second.wait("context window 2 — previous window archived")
        _quit(second)
    finally:
        second.close()
    assert "Prepare the release" in before
    assert _sessions(work) == [session]
    records = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    modes = [r["data"]["mode"] for r in records if r.get("customType") == "ctxmodes-mode"]
    assert modes == ["tree"]


def test_a_long_branch_is_replayed_bounded(work: Path) -> None:
    model = f"scripted:{work / 'script.json'}"
    (work / "config").mkdir()
    (work / "config" / "config.toml").write_text("[terminal]\nreplay_turns = 1\n")
    project = work / "project"
    env = {**private_env(work), "CTXMODES_MODEL": model}
    first = Tmux(["env", "-C", str(project), *_ctxmodes("chat", "--mode", "local")], env)
    try:
        first.wait("scripted/scripted")
        for prompt, answer in (("one", "Window one is open."), ("two", "All done.")):
            first.type(prompt)
            first.key("Enter")
            first.wait(answer)
        _quit(first)
    finally:
        first.close()
    second = Tmux(["env", "-C", str(project), *_ctxmodes("-c")], env)
    try:
        screen = second.wait("left •")
        replay = screen.split("── session")[-1]
        assert re.search(r"… \d+ earlier entries", replay)
        assert PROMPT + "two" in replay
        assert PROMPT + "one" not in replay
        assert "mode local" in screen
        _quit(second)
    finally:
        second.close()


def test_starting_and_quitting_without_a_prompt_leaves_no_file(work: Path) -> None:
    model = f"scripted:{work / 'script.json'}"
    env = {**private_env(work), "CTXMODES_MODEL": model}
    tmux = Tmux(["env", "-C", str(work / "project"), *_ctxmodes("chat", "--mode", "tree")], env)
    try:
        tmux.wait("scripted/scripted")
        tmux.type("/name not a prompt")
        tmux.key("Enter")
        _quit(tmux)
    finally:
        tmux.close()
    assert _sessions(work) == []
    tmux = Tmux(["env", "-C", str(work / "project"), *_ctxmodes("-c")], env)
    try:
        screen = tmux.wait("111.6k left")
        assert "ctxmodes · mode off" in screen, "nothing to continue: a new session"
        _quit(tmux)
    finally:
        tmux.close()
    assert _sessions(work) == []


def test_the_bare_command_takes_chats_options_as_pi_c_does(work: Path) -> None:
    """``ctxmodes -c --model SPEC`` is ``ctxmodes chat -c --model SPEC``, as ``pi -c --model
    SPEC`` is: the options of the interactive session need no ``chat`` in front."""
    model = f"scripted:{work / 'script.json'}"
    project = work / "project"
    env = private_env(work)
    made = subprocess.run(
        [*_ctxmodes("run", "--mode", "tree", "--model", model, "--cwd", str(project)), "Start"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Window one is open." in made.stdout
    (session,) = _sessions(work)
    reopened = Tmux(["env", "-C", str(project), *_ctxmodes("-c", "--model", model)], env)
    try:
        screen = reopened.wait("left •")
        assert "mode tree · session" in screen
        assert str(session) in screen.replace("\n", "")
        assert _footer(screen)[:2] == ("tree", "1")
        _quit(reopened)
    finally:
        reopened.close()
    assert _sessions(work) == [session]


def test_a_damaged_line_of_the_reopened_file_is_named_at_start(work: Path) -> None:
    """The interactive session skips a line it cannot read, as Pi does, and says so in one
    warning line above its banner, as `run` and the session commands do."""
    model = f"scripted:{work / 'script.json'}"
    project = work / "project"
    env = private_env(work)
    subprocess.run(
        [*_ctxmodes("run", "--model", model, "--cwd", str(project)), "Start"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    (session,) = _sessions(work)
    with session.open("a") as damaged:
        damaged.write('{"type":"message","id":"cut-off\n')
    lines = len(session.read_text().splitlines())
    reopened = Tmux(
        ["env", "-C", str(project), *_ctxmodes("--session", str(session), "--model", model)],
        env,
    )
    try:
        screen = reopened.wait("left •")
        _quit(reopened)
    finally:
        reopened.close()
    warning = f"ctxmodes: warning: {session}: line {lines}: not valid JSON (skipped)"
    assert warning in screen.replace("\n", "")
