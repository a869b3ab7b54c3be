"""The Off mode: no context management.

Off offers no context tools, appends no markers and writes nothing of its own; a session run
with Off is byte-for-byte the session the host writes with no mode at all.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxmodes import hookimpl
from ctxmodes.hostapi import HostSession
from ctxmodes.modes import ModeSpec

NAME = "off"


class OffMode:
    """The per-session object of the Off mode; it implements no lifecycle hook."""

    def __init__(self, session: HostSession) -> None:
        self.session = session


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    register(
        ModeSpec(
            name=NAME,
            description="No context management: no context tools, no markers, context untouched",
            factory=OffMode,
        )
    )
