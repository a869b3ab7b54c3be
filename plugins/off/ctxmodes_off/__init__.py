"""The Off mode: no context management.

Off offers no context tools, appends no markers and writes nothing of its own; a session run
with Off is byte-for-byte the session the host writes with no mode at all. The one thing it
does is keep context-window markers a managed mode left in the session away from the model:
with management off, a marker would tell the model about tools it no longer has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes import hookimpl

if TYPE_CHECKING:
    from ctxmodes import HostSession, ModeSpec, SessionView

NAME = "off"


def _build(session: HostSession) -> object:
    # Imported here so that every command-line start does not load the context-window kit.
    from ctxmodes_off.mode import OffMode

    return OffMode(session)


def _describe_switch(manager: SessionView, target: str) -> str | None:
    from ctxmodes_off.switching import describe_switch

    return describe_switch(manager, target)


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    # Imported here: `ctxmodes --help` imports this module and needs no mode.
    from ctxmodes import ModeSpec

    register(
        ModeSpec(
            name=NAME,
            description="No context management: no context tools, no markers, context untouched",
            factory=_build,
            describe_switch=_describe_switch,
        )
    )
