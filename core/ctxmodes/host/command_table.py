"""The slash commands of one session: their names, by Pi's rule, and parsing."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ctxmodes.commands import Command


@dataclass(frozen=True, slots=True)
class CommandCall:
    """``/name args`` resolved to a registered command."""

    command: Command
    args: str


def invocation_names(names: Sequence[str]) -> list[str]:
    """The names Pi gives commands registered as ``names``, in order
    (``resolveRegisteredCommands``): a name registered once is kept; each command of a
    name registered more than once is numbered by its place among them (``name:1``,
    ``name:2`` ...), and a numbered name an earlier command already took goes to the next
    number free."""
    counts = Counter(names)
    occurrences: Counter[str] = Counter()
    taken: set[str] = set()
    resolved: list[str] = []
    for name in names:
        occurrences[name] += 1
        suffix = occurrences[name]
        invoked = f"{name}:{suffix}" if counts[name] > 1 else name
        while invoked in taken:
            suffix += 1
            invoked = f"{name}:{suffix}"
        taken.add(invoked)
        resolved.append(invoked)
    return resolved


@dataclass(frozen=True, slots=True)
class PluginCommand:
    """A plugin's command as named: the name it registered (``name``), the name ``/name``
    runs it by (``invocation_name``, numbered when plugins registered the name more than
    once) and the plugin that registered it."""

    name: str
    invocation_name: str
    plugin: str


class CommandTable:
    """Commands by the name ``/name`` invokes them with.

    The core's built-in commands keep their names, as Pi's built-in commands do, and come
    first. Plugins' commands are named among themselves as Pi names its extensions'
    commands (:func:`invocation_names`); the built-ins take no part in that, so a plugin's
    ``tree`` stays ``tree``, listed as a plugin's command but shadowed by the built-in
    ``/tree``, as Pi's terminal shadows an extension's command named like one of its own.
    """

    def __init__(
        self,
        registered: Iterable[Command] = (),
        is_builtin: Callable[[Command], bool] = lambda command: False,
        owners: Sequence[str] = (),
    ) -> None:
        """:param registered: the commands in the order they were registered (a leading
            ``/`` of a name is dropped).
        :param is_builtin: whether a command is one of the core's built-in commands (the
            first built-in of a name is kept, a repeated one dropped).
        :param owners: the plugin that registered each command, in the same order (``""``
            for those past its end)."""
        self._builtins: dict[str, Command] = {}
        plugins: list[tuple[Command, str]] = []
        for index, command in enumerate(registered):
            command = dataclasses.replace(command, name=command.name.removeprefix("/"))
            if not is_builtin(command):
                plugins.append((command, owners[index] if index < len(owners) else ""))
            elif command.name not in self._builtins:
                self._builtins[command.name] = command
        names = invocation_names([command.name for command, _ in plugins])
        self._plugins: dict[str, Command] = {
            invoked: dataclasses.replace(command, name=invoked)
            for invoked, (command, _) in zip(names, plugins, strict=True)
        }
        self._named = [
            PluginCommand(command.name, invoked, owner)
            for invoked, (command, owner) in zip(names, plugins, strict=True)
        ]

    def plugin_commands(self) -> tuple[PluginCommand, ...]:
        """The plugins' commands as named, in the order they were registered."""
        return tuple(self._named)

    def __iter__(self) -> Iterator[Command]:
        """The built-in commands, then the plugins' in the order they were registered."""
        yield from self._builtins.values()
        yield from self._plugins.values()

    def get(self, name: str) -> Command | None:
        """The command ``/name`` runs: a built-in before a plugin's of the same name."""
        return self._builtins.get(name) or self._plugins.get(name)

    def match(self, text: str) -> CommandCall | None:
        """The command ``text`` invokes, if it is ``/name`` or ``/name args`` for a
        registered name; everything after the first space is the argument string."""
        if not text.startswith("/"):
            return None
        name, _, args = text[1:].partition(" ")
        command = self.get(name)
        return None if command is None else CommandCall(command, args)
