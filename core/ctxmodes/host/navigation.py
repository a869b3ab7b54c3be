"""The tree-navigation capability a session hands its plugins (``session.navigation``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxmodes.errors import StaleContextError
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.hostapi import NavigationRequest, TreeNavigationResult

if TYPE_CHECKING:
    from ctxmodes.host.session import AgentSession


class SessionNavigation:
    """:class:`ctxmodes.hostapi.TreeNavigation` bound to one :class:`AgentSession`.

    It only works for the session it was made for, while that session is current and idle:
    from a command, or from ``ctx_agent_settled`` (the first safe point after a run).
    Calling it from inside a run — a tool, ``ctx_turn_end`` — is refused rather than
    deferred, because the caller expects the tree to have moved when the call returns.
    """

    def __init__(self, session: AgentSession) -> None:
        self._session = session

    @property
    def ready(self) -> bool:
        session = self._session
        return (
            not session.is_stale
            and not session.is_quiescing
            and session.is_idle()
            and not session.is_busy_elsewhere()
        )

    def navigate_tree(self, request: NavigationRequest) -> TreeNavigationResult:
        session = self._session
        if session.is_stale:
            raise StaleContextError(
                "this navigation capability belongs to a session that was replaced or closed"
            )
        if session.is_quiescing:
            raise StaleContextError(
                "this navigation capability belongs to a session that is being replaced, "
                "closed or reloaded"
            )
        if not session.is_idle():
            raise SessionBusyError(
                "the session tree can only be navigated while the session is idle (for "
                "example from ctx_agent_settled), not during a run"
            )
        return session.navigate_tree(request)
