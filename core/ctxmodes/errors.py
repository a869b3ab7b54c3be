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
