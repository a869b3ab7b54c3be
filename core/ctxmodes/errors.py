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


def plugin_failure(error: BaseException) -> str:
    """``error`` in one line for an error naming the plugin whose code raised it: its type,
    its message and the innermost place outside ctxmodes it was raised from, which is where
    the plugin's author looks (``RuntimeError: boom (my_mode.py, line 12)``)."""
    from pathlib import Path

    core = Path(__file__).parent
    place = ""
    frame = error.__traceback__
    while frame is not None:
        path = Path(frame.tb_frame.f_code.co_filename)
        if core not in path.parents:
            place = f" ({path.name}, line {frame.tb_lineno})"
        frame = frame.tb_next
    message = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {message}{place}" if message else type(error).__name__ + place
