"""The session's state as the commands of a shell tool see it (Pi's "shell tool session
environment").

Every command the model runs through the ``bash`` tool gets five variables describing the
session at the moment the command starts: ``PI_SESSION_ID``, ``PI_SESSION_FILE`` (the
session file's absolute path; unset for a session kept in memory), ``PI_PROVIDER`` and
``PI_MODEL`` (the selected model), and ``PI_REASONING_LEVEL`` (the level the model takes:
``off`` for a model that does not reason). Values of these names inherited from the process
that started ctxmodes are removed first, so a nested agent never shows its parent's session.
The user's own ``!`` commands get none of this: they inherit the process's environment as it
is, as in Pi.

Internal module: :func:`shell_environment` and :data:`SESSION_ENVIRONMENT_NAMES` are
imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.tools.base import ToolContext

#: The variables describing the session, in Pi's order.
SESSION_ENVIRONMENT_NAMES: tuple[str, ...] = (
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
)

#: What a shell accepts as a variable name; anything else could not be set safely.
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def session_environment(
    *,
    session_id: str,
    session_file: Path | None,
    provider: str | None,
    model: str | None,
    reasoning_level: str | None,
) -> dict[str, str]:
    """The variables of :data:`SESSION_ENVIRONMENT_NAMES` that have a value, as Pi gives them:
    no ``PI_SESSION_FILE`` for a session in memory, no provider and model without one."""
    environment = {"PI_SESSION_ID": session_id}
    if session_file is not None:
        # An absolute path whatever the command line named, without resolving links (Pi's
        # path.resolve), so a command started elsewhere still finds the file.
        environment["PI_SESSION_FILE"] = os.path.abspath(session_file)
    if provider is not None and model is not None:
        environment["PI_PROVIDER"] = provider
        environment["PI_MODEL"] = model
    if reasoning_level:
        environment["PI_REASONING_LEVEL"] = reasoning_level
    return environment


def command_variables(
    context: ToolContext | None, *, expose_session_environment: bool = True
) -> dict[str, str | None]:
    """Every name of :data:`SESSION_ENVIRONMENT_NAMES` with the value a command started now
    gets, or ``None`` where it must be unset (a value the session lacks, or every one when
    ``expose_session_environment`` is false)."""
    variables: dict[str, str | None] = dict.fromkeys(SESSION_ENVIRONMENT_NAMES)
    if expose_session_environment and context is not None:
        current = context.session_environment()
        variables.update(
            (name, current[name]) for name in SESSION_ENVIRONMENT_NAMES if name in current
        )
    return variables


def shell_environment(
    context: ToolContext | None = None,
    *,
    base: Mapping[str, str] | None = None,
    expose_session_environment: bool = True,
) -> dict[str, str]:
    """The environment for a command a tool starts now, as Pi's shell tools build it.

    :param context: the tool call's context; its session's variables are added (see
        :attr:`ToolContext.session_environment`). ``None``: none are.
    :param base: the environment to start from; by default this process's.
    :param expose_session_environment: ``False`` leaves the session's variables out (Pi's
        ``exposeSessionEnvironment: false``); inherited values of these names are removed
        either way, so a nested agent never shows another session's.
    """
    environment = {
        name: value
        for name, value in (os.environ if base is None else base).items()
        if name not in SESSION_ENVIRONMENT_NAMES
    }
    variables = command_variables(context, expose_session_environment=expose_session_environment)
    environment.update((name, value) for name, value in variables.items() if value is not None)
    return environment


def shell_assignments(variables: Mapping[str, str | None]) -> str:
    """Bash commands (ending with ``;``) that export each variable of ``variables`` with its
    value and unset each one whose value is ``None``; their own complaints (a variable the
    shell made read-only) are silenced, so they never mix into a command's output. Empty
    for no variables.

    :raises ValueError: a name a shell variable cannot have.
    """
    if not variables:
        return ""
    for name in variables:
        if not _VARIABLE_NAME.fullmatch(name):
            raise ValueError(f"not a shell variable name: {name!r}")
    unset = [name for name, value in variables.items() if value is None]
    commands = [f"builtin unset {' '.join(unset)}"] if unset else []
    commands.extend(
        f"builtin export {name}={shlex.quote(value)}"
        for name, value in variables.items()
        if value is not None
    )
    return "{ " + "; ".join(commands) + "; } 2>/dev/null; "
