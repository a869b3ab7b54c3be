"""The Off mode: no context management.

Off offers no context tools, appends no markers and writes nothing of its own; a session run
with Off is byte-for-byte the session the host writes with no mode at all. The one thing it
does is keep context-window markers a managed mode left in the session away from the model:
with management off, a marker would tell the model about tools it no longer has.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxmodes import hookimpl
from ctxmodes.events import ContextProjection
from ctxmodes.hostapi import HostSession
from ctxmodes.modes import ModeSpec
from ctxmodes.windows.projection import strip_markers

NAME = "off"


class OffMode:
    """The per-session object of the Off mode; its only hook hides window markers."""

    def __init__(self, session: HostSession) -> None:
        self.session = session

    @hookimpl
    def ctx_project_context(self, session: HostSession, projection: ContextProjection) -> None:
        # Off sends the whole context anyway, so one pass over it costs no more than the
        # request itself; nothing is persisted.
        projection.messages = strip_markers(projection.messages)


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    register(
        ModeSpec(
            name=NAME,
            description="No context management: no context tools, no markers, context untouched",
            factory=OffMode,
        )
    )
