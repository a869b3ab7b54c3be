"""The Remote mode: Codex's native, encrypted ``history`` and ``notes`` namespaces, served by a
Codex history/notes backend (the ChatGPT service or ``ctxmodes serve``).

Remote needs a model on the Codex transport (``openai-codex-responses``); any other model is
refused when the session starts, and nothing ever falls back to Local or Tree. Windows,
markers, the budget and compaction are Local's; only where history and notes live differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxmodes import hookimpl

if TYPE_CHECKING:
    from ctxmodes import CliCommand, Evidence, HostSession, ModeSpec, SessionView

NAME = "remote"


def _build(session: HostSession) -> object:
    # Imported here: loading the plugin (every command-line start, `ctxmodes --help`) must
    # not load the mode's HTTP client and the kit; only a session that runs Remote does.
    from ctxmodes_remote.mode import remote_mode

    return remote_mode(session)


def _recognize(manager: SessionView) -> Evidence | None:
    from ctxmodes_remote.recognition import recognize

    return recognize(manager)


def _describe_switch(manager: SessionView, target: str) -> str | None:
    from ctxmodes_remote.recognition import describe_switch

    return describe_switch(manager, target)


@hookimpl
def ctx_register_modes(register: Callable[[ModeSpec], None]) -> None:
    # Imported here: `ctxmodes --help` imports this module and needs no mode.
    from ctxmodes import ModeSpec

    register(
        ModeSpec(
            name=NAME,
            description="Context windows with history and notes in the Codex history service",
            factory=_build,
            recognize=_recognize,
            describe_switch=_describe_switch,
        )
    )


@hookimpl
def ctx_register_cli_commands(register: Callable[[CliCommand], None]) -> None:
    # `ctxmodes serve`: only its arguments are imported here; the service (HTTP stack,
    # encryption, storage) is imported when one of its commands runs.
    from ctxmodes_remote.service.cli import command

    register(command())
