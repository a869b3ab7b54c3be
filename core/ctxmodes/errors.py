"""Errors that carry a message meant for a person.

Anything raised as :class:`CtxmodesError` is shown by the CLI as one line, without a
traceback; every other exception is a bug and keeps its traceback.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations


class CtxmodesError(Exception):
    """Base class for expected, user-facing failures (bad input, bad configuration)."""


class ConfigError(CtxmodesError):
    """The configuration is invalid (unknown mode, malformed file, bad value)."""


class PluginError(CtxmodesError):
    """A plugin could not be loaded or registered."""


class StaleContextError(CtxmodesError):
    """A command context or session handle was used after its session was replaced."""


class SessionCwdMissingError(CtxmodesError):
    """A stored session's working directory no longer exists (a project moved or removed),
    so its tools would have nowhere to run. Said in Pi's words; the caller may continue the
    session in another directory, such as ``fallback_cwd``, by naming it.

    :ivar session_file: the session's file.
    :ivar session_cwd: the directory it records.
    :ivar fallback_cwd: the directory it would continue in instead.
    """

    def __init__(self, session_file: str, session_cwd: str, fallback_cwd: str) -> None:
        super().__init__(
            f"Stored session working directory does not exist: {session_cwd}\n"
            f"Session file: {session_file}\n"
            f"Current working directory: {fallback_cwd}"
        )
        self.session_file = session_file
        self.session_cwd = session_cwd
        self.fallback_cwd = fallback_cwd


class Terminated(BaseException):
    """A termination signal ended the command, its work wound down; not an ``Exception``, so
    that no handler of failures takes it for one."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """The shell's status for a command ended by the signal (143 for ``SIGTERM``)."""
        return 128 + self.signum


def plugin_failure(error: BaseException) -> str:
    """``error`` in one line for an error naming the plugin whose code raised it: its type,
    the first line of its message and :func:`raised_at` (``RuntimeError: boom (my_mode.py,
    line 12)``)."""
    lines = str(error).strip().splitlines()
    message = f": {lines[0].strip()}" if lines else ""
    return f"{type(error).__name__}{message}{raised_at(error)}"


def raised_at(error: BaseException) -> str:
    """`` (file, line N)``: the innermost place ``error`` was raised from outside ctxmodes,
    the standard library and pluggy (which calls the hooks), which is where a plugin's author
    looks; ``""`` when there is none, and for a syntax error, whose message names its place
    already."""
    import sys
    import sysconfig
    from pathlib import Path

    paths = sysconfig.get_paths()
    core, stdlib = Path(__file__).parent, Path(paths["stdlib"])
    installed = {Path(paths["purelib"]), Path(paths["platlib"])}
    pluggy = sys.modules.get("pluggy")
    machinery = {core} if pluggy is None else {core, Path(pluggy.__file__ or "").parent}
    place = ""
    frame = error.__traceback__
    while frame is not None and not isinstance(error, SyntaxError):
        path = Path(frame.tb_frame.f_code.co_filename)
        inside = set(path.parents)
        library = stdlib in inside and not installed & inside
        if path.is_absolute() and not machinery & inside and not library:
            place = f" ({path.name}, line {frame.tb_lineno})"
        frame = frame.tb_next
    return place
