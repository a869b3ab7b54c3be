"""The context a command handler receives, bound to the session it was made for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ctxmodes.errors import CtxmodesError, StaleContextError
from ctxmodes.hostapi import NavigationRequest, TreeNavigationResult, UserInterface

if TYPE_CHECKING:
    from ctxmodes.host.session import AgentSession
    from ctxmodes.session.models import CompactionEntry


@dataclass(frozen=True, slots=True)
class ForkOutcome:
    """A fork: the new session, and the text of the user message forked from (for the
    editor) when the fork was taken before one."""

    session: AgentSession
    editor_text: str | None


class SessionController(Protocol):
    """What replaces a session: the host that owns it (:class:`ctxmodes.host.runtime.AgentHost`)."""

    def new_session(self) -> AgentSession:
        """Replace the current session by a new, empty one."""

    def resume_session(self, path: Path) -> AgentSession:
        """Replace the current session by the session stored at ``path``."""

    def fork_session(self, entry_id: str | None) -> ForkOutcome:
        """Replace the current session by a copy of its path up to ``entry_id``."""

    def describe_mode_change(self, name: str) -> str | None:
        """What switching the current session to mode ``name`` changes, in one line."""

    def switch_mode(self, name: str) -> None:
        """Make ``name`` the active mode of the current session."""

    def mode_names(self) -> list[str]:
        """The installed modes."""


class HostCommandContext:
    """:class:`ctxmodes.commands.CommandContext` for one session.

    Every member raises :class:`StaleContextError` once that session was replaced or closed;
    the replacing methods return a context for the new session instead.
    """

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    @property
    def session(self) -> AgentSession:
        return self._alive()

    @property
    def ui(self) -> UserInterface:
        return self._alive().ui

    def wait_for_idle(self) -> None:
        """Block until the session settled. Only from a command: a command started from
        inside the session's own run cannot wait for that run (it raises instead)."""
        self._alive().wait_for_idle()

    def navigate_tree(self, request: NavigationRequest) -> TreeNavigationResult:
        return self._alive().navigate_tree(request)

    def compact(self, custom_instructions: str | None = None) -> CompactionEntry:
        return self._alive().compact(custom_instructions)

    def new_session(self) -> HostCommandContext:
        return HostCommandContext(self._controller().new_session())

    def resume_session(self, path: Path) -> HostCommandContext:
        return HostCommandContext(self._controller().resume_session(path))

    def fork_session(self, entry_id: str | None = None) -> tuple[HostCommandContext, str | None]:
        outcome = self._controller().fork_session(entry_id)
        return HostCommandContext(outcome.session), outcome.editor_text

    def describe_mode_change(self, name: str) -> str | None:
        return self._controller().describe_mode_change(name)

    def switch_mode(self, name: str) -> None:
        self._controller().switch_mode(name)

    def mode_names(self) -> list[str]:
        return self._controller().mode_names()

    def _alive(self) -> AgentSession:
        if self._session.is_stale:
            raise StaleContextError(
                "this command context belongs to a session that was replaced or closed"
            )
        return self._session

    def _controller(self) -> SessionController:
        controller = self._alive().controller
        if controller is None:
            raise CtxmodesError("this session is not run by a host that can replace it")
        return controller
