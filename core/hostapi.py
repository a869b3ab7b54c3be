"""What a plugin may ask of the agent host.

Hooks receive a :class:`HostSession`; plugins (built-in modes included) program against this
protocol, never against the host class, so a mode can be tested with any object that
satisfies it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager

NotifyLevel = Literal["info", "warning", "error"]


class UserInterface(Protocol):
    """The seam between the host and whoever watches it (terminal, tests, an editor)."""

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        """Show a short message."""

    def confirm(self, title: str, message: str) -> bool:
        """Ask a yes/no question; headless implementations answer from a policy."""

    def get_editor_text(self) -> str:
        """The text the user is composing but has not submitted."""

    def set_editor_text(self, text: str) -> None:
        """Replace the text being composed."""


class HostSession(Protocol):
    """The running agent session as plugins see it."""

    @property
    def session_manager(self) -> SessionManager:
        """The session store of the current session file."""

    @property
    def cwd(self) -> Path:
        """The working directory tools run in."""

    @property
    def ui(self) -> UserInterface:
        """The user interface seam."""

    @property
    def mode_name(self) -> str:
        """The name of the active mode (``"off"`` when none is configured)."""

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens, when known."""

    def is_idle(self) -> bool:
        """True when no run, compaction or branch summary is in progress."""

    def abort(self) -> None:
        """Ask the current run to stop; returns at once (the run settles later)."""
