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

from ctxmodes.errors import PluginError
from ctxmodes.names import PLUGIN_THING_NAME
from ctxmodes.records import FrozenRecord


class CliCommand(FrozenRecord):
    """One ``ctxmodes`` subcommand (immutable).

    :param name: the subcommand (``demo``): lower case, digits, ``-`` or ``_``.
    :param help: one line for ``ctxmodes --help``.
    :param run: called with the parsed arguments; returns the exit status. A
        :class:`~ctxmodes.errors.CtxmodesError` it raises is printed as one error line.
    :param configure: adds the subcommand's arguments to its parser.
    :param description: the longer text of ``ctxmodes <name> --help``.
    """

    __slots__ = ("configure", "description", "help", "name", "run")
    _fields = ("name", "help", "run", "configure", "description")

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
        self._set(name=name, help=help, run=run, configure=configure, description=description)
