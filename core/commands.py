"""Slash commands: ``/name args`` typed by the user, dispatched before any model call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ctxmodes.hostapi import HostSession


class CommandContext(Protocol):
    """What a command handler may do beyond an ordinary hook: it runs while the host is
    between runs, so it may wait for idleness and move through the session tree.

    A context is bound to one session; using it after that session was replaced (``/new``,
    ``/resume``, ``/fork``) raises :class:`ctxmodes.errors.StaleContextError`.
    """

    @property
    def session(self) -> HostSession: ...

    def wait_for_idle(self) -> None: ...


CommandHandler = Callable[[str, CommandContext], None]


@dataclass(frozen=True, slots=True)
class Command:
    """A registered slash command; ``name`` is given without the leading slash."""

    name: str
    description: str
    handler: CommandHandler
