"""Slash commands: ``/name args`` typed by the user, dispatched before any model call.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ctxmodes.hostapi import (
        HostSession,
        NavigationRequest,
        TreeNavigationResult,
        UserInterface,
    )
    from ctxmodes.session.models import CompactionEntry


class CommandContext(Protocol):
    """What a command handler may do beyond an ordinary hook: it runs outside the model
    loop, so it may wait for idleness, move through the session tree and replace the session.

    A command runs on the thread that submitted it, at once, even while a run is active on
    another thread. A context is bound to one session; using it after that session was
    replaced (``/new``, ``/resume``, ``/fork``) raises
    :class:`ctxmodes.errors.StaleContextError`. The replacing methods return a context bound
    to the new session.
    """

    @property
    def session(self) -> HostSession: ...

    @property
    def ui(self) -> UserInterface: ...

    def wait_for_idle(self) -> None:
        """Block until the session settled (refused from inside the session's own run)."""

    def navigate_tree(self, request: NavigationRequest) -> TreeNavigationResult:
        """Navigate the current session, as ``TreeNavigation.navigate_tree`` does (a
        command navigates for the user: leave ``request.internal`` False)."""

    def compact(self, custom_instructions: str | None = None) -> CompactionEntry:
        """Compact now, aborting a run in progress first."""

    def new_session(self) -> CommandContext:
        """Replace the session by a new, empty one in the same directory."""

    def resume_session(self, path: Path) -> CommandContext:
        """Replace the session by the one stored at ``path``."""

    def fork_session(self, entry_id: str | None = None) -> tuple[CommandContext, str | None]:
        """Replace the session by a new file holding its path up to ``entry_id`` (the whole
        current path without it). Forking from a user message keeps the path *before* it
        and returns the message's text for the editor."""

    def describe_mode_change(self, name: str) -> str | None:
        """One line on what switching the session to mode ``name`` changes (``None``: it
        already runs in ``name``); ask the user before :meth:`switch_mode`."""

    def switch_mode(self, name: str) -> None:
        """Shut the active mode object down and activate mode ``name`` for the session
        (recorded in the session file)."""

    def mode_names(self) -> list[str]:
        """The installed modes."""


CommandHandler = Callable[[str, CommandContext], None]


@dataclass(frozen=True, slots=True)
class Command:
    """A registered slash command; ``name`` is given without the leading slash.

    :ivar arguments: a hint shown after the name while typing it (``"[instructions]"``).
    :ivar while_streaming: the command may run while the agent works; an interactive
        session refuses the others until the run is over (keeping the typed text).
    """

    name: str
    description: str
    handler: CommandHandler
    arguments: str = ""
    while_streaming: bool = False
