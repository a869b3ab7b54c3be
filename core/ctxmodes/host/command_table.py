"""The slash commands of one session: registration with Pi's naming rule, and parsing."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from ctxmodes.commands import Command


@dataclass(frozen=True, slots=True)
class CommandCall:
    """``/name args`` resolved to a registered command."""

    command: Command
    args: str


class CommandTable:
    """Commands by name. A name registered twice keeps the first; the later one is renamed
    ``name:1``, ``name:2`` ..., as Pi names duplicate extension commands."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}

    def register(self, command: Command) -> Command:
        """Add ``command``; returns it as registered (possibly renamed)."""
        name = command.name.removeprefix("/")
        if name in self._commands:
            suffix = 1
            while f"{name}:{suffix}" in self._commands:
                suffix += 1
            name = f"{name}:{suffix}"
        registered = dataclasses.replace(command, name=name)
        self._commands[name] = registered
        return registered

    def __iter__(self) -> Iterator[Command]:
        return iter(self._commands.values())

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def match(self, text: str) -> CommandCall | None:
        """The command ``text`` invokes, if it is ``/name`` or ``/name args`` for a
        registered name; everything after the first space is the argument string."""
        if not text.startswith("/"):
            return None
        name, _, args = text[1:].partition(" ")
        command = self._commands.get(name)
        return None if command is None else CommandCall(command, args)
