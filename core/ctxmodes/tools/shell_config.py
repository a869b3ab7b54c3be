"""Which bash runs commands, and the text run before each one (Pi's ``shellPath`` and
``shellCommandPrefix``).

Pi starts ``<shellPath> -c "<prefix>\\n<command>"`` for every command. ctxmodes keeps one
bash running instead (:mod:`ctxmodes.tools.shell`), so the configured program must be a
bash: it is asked for its ``BASH_VERSION`` before it is started for good, and anything else
is refused with a line saying so rather than failing command after command. The prefix is
run before every command, in the same sourced file, so it sees the command's shell exactly
as in Pi (its aliases and options apply to the command's lines).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ctxmodes.session.paths import resolve_path
from ctxmodes.tools.base import ToolError

#: How the setting is named in errors: ctxmodes' key, and Pi's.
SETTING = "shell.path, Pi's shellPath"
#: Seconds the configured program gets to say which shell it is.
_PROBE_TIMEOUT = 10.0
_BASH_VERSION = re.compile(r"\d+\.\d+")


@dataclass(frozen=True, slots=True)
class ShellConfig:
    """The configured shell.

    :ivar path: the bash to run (``~`` and a path relative to the working directory
        allowed); ``None`` or empty: ``bash`` on ``PATH``.
    :ivar command_prefix: run before every command (aliases, ``shopt``); ``None`` or empty:
        nothing.
    """

    path: str | None = None
    command_prefix: str | None = None

    def script(self, command: str) -> str:
        """What the shell runs for ``command``: the prefix's lines, then the command's."""
        return f"{self.command_prefix}\n{command}" if self.command_prefix else command

    def configured_program(self, cwd: Path) -> str | None:
        """The absolute path ``path`` names from the working directory ``cwd``, without
        checking it; ``None`` when no program is configured."""
        return resolve_path(self.path, cwd) if self.path else None

    def program(self, cwd: Path, env: Mapping[str, str]) -> str:
        """The bash to start for a session in the working directory ``cwd``, checked with
        the environment the shell gets.

        :raises ToolError: no bash on ``PATH``, or the configured program does not exist,
            cannot be run or is not bash.
        """
        configured = self.configured_program(cwd)
        if configured is None:
            found = shutil.which("bash")
            if found is None:
                raise ToolError("Cannot run commands: bash was not found on PATH")
            return found
        if not os.path.exists(configured):
            raise ToolError(f"The configured shell does not exist: {configured} ({SETTING})")
        _require_bash(configured, env)
        return configured


def _require_bash(program: str, env: Mapping[str, str]) -> None:
    probe = [program, "-c", 'printf %s "${BASH_VERSION-}"']
    try:
        answer = subprocess.run(
            probe,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=dict(env),
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ToolError(
            f"The configured shell {program} did not answer within {_PROBE_TIMEOUT:g} "
            f"seconds ({SETTING})"
        ) from None
    except OSError as exc:
        raise ToolError(
            f"Cannot run the configured shell {program}: {exc.strerror or exc} ({SETTING})"
        ) from None
    if not _BASH_VERSION.match(answer.stdout.decode("utf-8", "replace")):
        raise ToolError(
            f"The configured shell {program} is not bash: ctxmodes runs commands in one "
            f"persistent bash ({SETTING})"
        )


#: Bash on ``PATH``, with no prefix.
DEFAULT_SHELL = ShellConfig()
