"""A session opened without an agent: for offline inspection (``ctxmodes history FILE``)
and for testing a mode's hooks in isolation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctxmodes.ui import HeadlessUI

if TYPE_CHECKING:
    from ctxmodes.hostapi import UserInterface
    from ctxmodes.session.manager import SessionManager


@dataclass
class OfflineSession:
    """Satisfies :class:`~ctxmodes.hostapi.HostSession` for a session nobody is running:
    it is always idle and there is nothing to abort."""

    session_manager: SessionManager
    mode_name: str = "off"
    cwd: Path = field(default_factory=Path.cwd)
    ui: UserInterface = field(default_factory=HeadlessUI)
    context_window: int | None = None

    def is_idle(self) -> bool:
        return True

    def abort(self) -> None:
        """Nothing runs offline, so there is nothing to stop."""
