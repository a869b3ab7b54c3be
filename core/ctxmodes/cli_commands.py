"""Command-line subcommands contributed by plugins (``ctxmodes <name> ...``).

A plugin implements :func:`~ctxmodes.hookspecs.ctx_register_cli_commands` at module level and
registers one :class:`CliCommand` per subcommand, as llm's ``register_commands`` does for its
click group. Registration must stay import-light: import what the command needs inside
``run``, so that ``ctxmodes --help`` stays fast.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ctxmodes.errors import PluginError
from ctxmodes.names import PLUGIN_THING_NAME

_FIELDS = ("name", "help", "run", "configure", "description")


class CliCommand:
    """One ``ctxmodes`` subcommand (immutable).

    :param name: the subcommand (``demo``): lower case, digits, ``-`` or ``_``.
    :param help: one line for ``ctxmodes --help``.
    :param run: called with the parsed arguments; returns the exit status. A
        :class:`~ctxmodes.errors.CtxmodesError` it raises is printed as one error line.
    :param configure: adds the subcommand's arguments to its parser.
    :param description: the longer text of ``ctxmodes <name> --help``.
    """

    # A plain class rather than a dataclass: ``ctxmodes --help`` builds one per plugin
    # command, and the dataclasses module imports ``inspect``, a fifth of that start.
    __slots__ = _FIELDS

    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    configure: Callable[[argparse.ArgumentParser], None] | None
    description: str | None

    def __init__(
        self,
        name: str,
        help: str,
        run: Callable[[argparse.Namespace], int],
        configure: Callable[[argparse.ArgumentParser], None] | None = None,
        description: str | None = None,
    ) -> None:
        if not PLUGIN_THING_NAME.match(name):
            raise PluginError(
                f"invalid command name {name!r}: use lower-case letters, digits, '-' or '_'"
            )
        for field, value in zip(_FIELDS, (name, help, run, configure, description), strict=True):
            object.__setattr__(self, field, value)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in _FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a CliCommand is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a CliCommand is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CliCommand):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{field}={getattr(self, field)!r}" for field in _FIELDS)
        return f"CliCommand({shown})"
