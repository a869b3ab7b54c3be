"""A real terminal for tests: one tmux server of the test's own, running one command."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

#: How long to wait for the screen to show something.
WAIT = 30.0


def ctxmodes_command(*args: str) -> list[str]:
    """The installed ``ctxmodes`` command with ``args``."""
    return [str(Path(sys.executable).with_name("ctxmodes")), *args]


def private_env(work: Path) -> dict[str, str]:
    """An environment whose configuration, state, Pi and home directories are in ``work``,
    running the code the tests import."""
    env = {
        "CTXMODES_CONFIG_DIR": str(work / "config"),
        "XDG_STATE_HOME": str(work / "state"),
        "PI_CODING_AGENT_DIR": str(work / "pi"),
        "HOME": str(work),
        "TERM": "xterm-256color",
        "PATH": os.environ.get("PATH", ""),
    }
    # A PYTHONPATH that puts a checkout's code before the installed one must reach the
    # command too (tests/conftest.py made it absolute: the command runs elsewhere).
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


class Tmux:
    """One tmux server of our own (its own socket), one window running a command."""

    def __init__(
        self, command: list[str], env: dict[str, str], *, columns: int = 120, rows: int = 40
    ) -> None:
        self.socket = f"ctxmodes-test-{uuid.uuid4().hex[:8]}"
        shell = " ".join(quote(part) for part in command) + "; echo CTXMODES-EXIT=$?; sleep 60"
        exports = " ".join(f"{key}={quote(value)}" for key, value in env.items())
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(columns),
            "-y",
            str(rows),
            f"env {exports} sh -c {quote(shell)}",
        )

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=WAIT,
        )
        return result.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-3000")

    def visible(self) -> str:
        """The rows on the screen now, without the scrollback (a terminal at its top may keep
        what was erased there in its scrollback: tmux does)."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "t")

    def resize(self, columns: int) -> None:
        """Make the terminal ``columns`` wide, as a person dragging its window's edge."""
        self._tmux("resize-window", "-t", "t", "-x", str(columns))

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)

    def key(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def wait(self, pattern: str) -> str:
        deadline = time.monotonic() + WAIT
        while True:
            screen = self.screen()
            if pattern in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {pattern!r}; screen:\n{screen[-4000:]}"
                )
            time.sleep(0.05)

    def until(self, holds: Callable[[str], bool]) -> str:
        """The screen once ``holds`` is true of it (a line drawn a moment after the text
        waited for, say)."""
        deadline = time.monotonic() + WAIT
        while True:
            screen = self.screen()
            if holds(screen):
                return screen
            assert time.monotonic() < deadline, screen[-4000:]
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


def quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
