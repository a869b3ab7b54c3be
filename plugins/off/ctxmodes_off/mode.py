"""The per-session object of the Off mode."""

from __future__ import annotations

from ctxmodes import ContextProjection, HostSession, hookimpl
from ctxmodes.windows import strip_markers


class OffMode:
    """Off's only hook hides window markers a managed mode left in the session."""

    def __init__(self, session: HostSession) -> None:
        self.session = session

    @hookimpl
    def ctx_project_context(self, session: HostSession, projection: ContextProjection) -> None:
        # Off sends the whole context anyway, so one pass over it costs no more than the
        # request itself; nothing is persisted.
        projection.messages = strip_markers(projection.messages)
