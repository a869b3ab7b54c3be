"""The core's sub-commands: each one's name, module and line in ``ctxmodes --help``.

The table is what ``ctxmodes --help`` lists, so a command's module (and what it imports) is
loaded only when the command line names that command. A module's ``register(subparsers)``
adds the parsers of every command it serves, through :func:`add_command_parser`.
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple


class CoreCommand(NamedTuple):
    module: str
    help: str


#: In ``--help`` order; commands served by one module are adjacent.
CORE_COMMANDS: dict[str, CoreCommand] = {
    "chat": CoreCommand(
        "ctxmodes.cli.chat_cmd",
        "the interactive session (also what `ctxmodes` alone starts on a terminal)",
    ),
    "run": CoreCommand(
        "ctxmodes.cli.run_cmd", "run prompts non-interactively and print the transcript"
    ),
    "modes": CoreCommand("ctxmodes.cli.modes_cmd", "list installed context-management modes"),
    "models": CoreCommand(
        "ctxmodes.cli.models_cmd",
        "list the models ctxmodes can use (provider/model-id), credentialed first",
    ),
    "login": CoreCommand(
        "ctxmodes.cli.login_cmd",
        "log in to a provider: a subscription in the browser, or an API key",
    ),
    "logout": CoreCommand(
        "ctxmodes.cli.login_cmd", "forget the credentials `ctxmodes login` stored"
    ),
    "auth": CoreCommand(
        "ctxmodes.cli.auth_cmd",
        "print a provider's key or token for another program, or check it is ready (Pi's "
        "`pi auth`)",
    ),
    "config": CoreCommand("ctxmodes.cli.config_cmd", "inspect settings"),
    "history": CoreCommand(
        "ctxmodes.cli.retrieval_cmd", "run a read-only history operation on a session file"
    ),
    "notes": CoreCommand(
        "ctxmodes.cli.retrieval_cmd", "run a read-only notes operation on a session file"
    ),
    "session": CoreCommand("ctxmodes.cli.session_cmd", "inspect Pi session files"),
}


def add_command_parser(subparsers: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    """The parser of core command ``name``, with its line of :data:`CORE_COMMANDS`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=CORE_COMMANDS[name].help, **options
    )
    return parser
