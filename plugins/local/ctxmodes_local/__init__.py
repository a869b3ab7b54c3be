"""The Local mode: Codex-shaped context windows over the Pi session alone.

The model gets ``new_context``, ``get_context_remaining``, ``history`` and ``notes``. A
rollover appends the next window marker on the same branch; the model sees only the latest
window, while the session file keeps every window, readable through ``history``. Notes are
entries of the session file. Nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes import hookimpl

if TYPE_CHECKING:
    from ctxmodes import Evidence, HostSession, ModeSpec, SessionView

NAME = "local"


def _build(session: HostSession) -> object:
    # Imported here so that listing modes (and every command-line start) never loads the
    # mode's machinery.
    from ctxmodes_local.mode import local_mode

    return local_mode(session)


def _recognize(manager: SessionView) -> Evidence | None:
    from ctxmodes_local.recognition import recognize

    return recognize(manager)


def _describe_switch(manager: SessionView, target: str) -> str | None:
    from ctxmodes_local.recognition import describe_switch

    return describe_switch(manager, target)


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    # Imported here: `ctxmodes --help` imports this module and needs no mode.
    from ctxmodes import ModeSpec

    register(
        ModeSpec(
            name=NAME,
            description="Context windows with history and notes kept in the Pi session file",
            factory=_build,
            recognize=_recognize,
            describe_switch=_describe_switch,
        )
    )
