"""Errors the agent host raises at its callers."""

from __future__ import annotations

from ctxmodes.errors import CtxmodesError


class SessionBusyError(CtxmodesError):
    """The request needs an idle session, but a run, compaction or navigation is active."""


class NoModelError(CtxmodesError):
    """The session has no model, so nothing can be sent."""


class SessionChangeCancelled(CtxmodesError):
    """A plugin kept the current session (``ctx_session_before_switch`` or
    ``ctx_session_before_fork`` cancelled its replacement)."""
