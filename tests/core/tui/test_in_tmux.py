"""The interactive session in a real terminal (tmux), started from a shell as a person
starts it: nothing but the session's own drawing reaches the screen, and the slash-command
menu keeps its rows when the editor sits at the bottom of the screen."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.tmux import Tmux, ctxmodes_command, private_env, quote

from ctxmodes.tui.layout import MENU_ROWS

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

FOOTER = "scripted/scripted"
#: A terminal's answer to a cursor-position request, as it shows when echoed.
ECHOED_REPORT = re.compile(r"\^\[\[\d+;\d+R|\x1b\[\d+;\d+R")


def shell_in_tmux(work: Path, *, rows: int = 40) -> Tmux:
    """An interactive shell in tmux, its terminal in the state a person's would be."""
    return Tmux(["bash", "--norc", "--noprofile"], private_env(work), columns=100, rows=rows)


def chat_command(work: Path) -> str:
    """The command line a person types to start the session in ``work``."""
    script = work / "script.json"
    script.write_text('{"responses": [{"text": "hello there"}]}')
    command = ctxmodes_command("chat", "--model", "scripted:script.json")
    return f"cd {quote(str(work))} && " + " ".join(quote(part) for part in command)


def test_no_cursor_position_report_reaches_the_screen_at_start(tmp_path):
    for launch in range(8):
        work = tmp_path / f"launch-{launch}"
        work.mkdir()
        tmux = shell_in_tmux(work)
        try:
            tmux.type(chat_command(work))
            tmux.key("Enter")
            tmux.wait(FOOTER)
            tmux.type("hi")
            tmux.key("Enter")
            screen = tmux.wait("hello there")
            assert not ECHOED_REPORT.search(screen), f"launch {launch}:\n{screen}"
            prompt_lines = [line for line in screen.splitlines() if line.startswith("\u203a")]
            assert prompt_lines[0] == "\u203a hi", screen
        finally:
            tmux.close()


def test_the_slash_menu_keeps_its_rows_at_the_bottom_of_the_screen(tmp_path):
    tmux = shell_in_tmux(tmp_path, rows=20)
    try:
        # Fill the screen first: the editor starts on its last rows, as in real use.
        tmux.type(f"seq 100; {chat_command(tmp_path)}")
        tmux.key("Enter")
        tmux.wait(FOOTER)
        tmux.type("/")
        screen = tmux.wait("/compact")
        menu = [line for line in screen.splitlines() if re.match(r"^\s+/\w", line)]
        assert len(menu) >= 8, screen
        assert len(menu) == MENU_ROWS, screen
        tmux.type("mo")
        screen = tmux.wait("/model")
        assert "/compact" not in screen.split("\u203a /mo", 1)[1], screen
    finally:
        tmux.close()
