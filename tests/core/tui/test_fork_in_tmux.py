"""``/fork`` in a real terminal (tmux), started as a person starts it: the selector's rows
as Pi draws them, Enter forking into a new file with the message back in the editor, and
Esc Esc opening the selector when Pi's ``doubleEscapeAction`` in Pi's own settings file
says ``fork``."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from support.tmux import WAIT, Tmux, ctxmodes_command, private_env, quote

from ctxmodes.tui.fork_selector import FORKED, SUBTITLE, TITLE

pytestmark = [
    pytest.mark.slow,  # a real terminal, end to end
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

FOOTER = "scripted/scripted"


def _rows(screen: str) -> list[str]:
    """The selector's lines under its title, up to its key hint."""
    lines = [line.rstrip() for line in screen.splitlines()]
    start = max(at for at, line in enumerate(lines) if line == TITLE)
    end = next(at for at in range(start, len(lines)) if "escape/ctrl+c cancel" in lines[at])
    return lines[start + 2 : end]


def _editor(screen: str) -> list[str]:
    """The editor's lines: after what was printed last, before the footer's two lines."""
    lines = [line.rstrip() for line in screen.splitlines()]
    footer = max(at for at, line in enumerate(lines) if FOOTER in line) - 1
    start = max(at for at, line in enumerate(lines[:footer]) if line.startswith("\u203a"))
    return lines[start:footer]


def _until_editor_empty(tmux: Tmux) -> None:
    deadline = time.monotonic() + WAIT
    while _editor(tmux.screen()) != ["\u203a"]:
        if time.monotonic() > deadline:
            raise AssertionError(f"the editor did not empty:\n{tmux.screen()[-2000:]}")
        time.sleep(0.05)


def test_the_selector_forks_and_esc_esc_opens_it_as_pi_s_setting_says(tmp_path: Path) -> None:
    env = private_env(tmp_path)
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "settings.json").write_text(json.dumps({"doubleEscapeAction": "fork"}))
    replies = [{"text": "first reply"}, {"text": "second reply"}]
    (tmp_path / "script.json").write_text(json.dumps({"responses": replies}))
    command = ctxmodes_command("chat", "--model", "scripted:script.json")
    shell = f"cd {quote(str(tmp_path))} && " + " ".join(quote(part) for part in command)
    tmux = Tmux(["bash", "--norc", "--noprofile"], env, columns=100, rows=40)
    try:
        tmux.type(shell)
        tmux.key("Enter")
        tmux.wait(FOOTER)
        for prompt, reply in (("one", "first reply"), ("two\nlines", "second reply")):
            first, _, second = prompt.partition("\n")
            tmux.type(first)
            if second:
                tmux.key("C-j")
                tmux.type(second)
            tmux.key("Enter")
            tmux.wait(reply)
        tmux.type("/fork")
        tmux.key("Enter")
        screen = tmux.wait(SUBTITLE)
        assert _rows(screen) == [
            "  one",
            "  Message 1 of 2",
            "",
            "\u203a two lines",
            "  Message 2 of 2",
            "",
        ], screen
        tmux.key("Enter")
        screen = tmux.wait(FORKED)
        # The message is back in the editor, both of its lines.
        assert _editor(screen) == ["\u203a two", "  lines"], screen
        sessions = sorted((tmp_path / "pi" / "sessions").rglob("*.jsonl"))
        assert len(sessions) == 2
        tmux.key("C-c")  # clears the editor
        _until_editor_empty(tmux)
        tmux.key("Escape")
        time.sleep(0.1)
        tmux.key("Escape")
        screen = tmux.wait("Message 1 of 1")
        assert _rows(screen) == ["\u203a one", "  Message 1 of 1", ""], screen
        tmux.key("Escape")
    finally:
        tmux.close()
