"""Errors raised by the session store; all are :class:`~ctxmodes.errors.CtxmodesError`."""

from __future__ import annotations

from ctxmodes.errors import CtxmodesError

__all__ = [
    "EntryNotFoundError",
    "NotASessionError",
    "ReadOnlySessionError",
    "SessionChangedError",
    "SessionError",
    "SessionLockedError",
]


class SessionError(CtxmodesError):
    """A session file or a session operation failed."""


class NotASessionError(SessionError):
    """The file is not empty but its first record is not a Pi session header."""


class EntryNotFoundError(SessionError, KeyError):
    """An entry id does not exist in the session."""

    def __init__(self, entry_id: str | None) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id

    def __str__(self) -> str:
        # KeyError would quote the message.
        return str(self.args[0])


class SessionLockedError(SessionError):
    """Another writer already holds the session file."""


class ReadOnlySessionError(SessionError):
    """An append was attempted on a session opened for reading only."""


class SessionChangedError(SessionError):
    """The session file changed on disk in a way an append-only file never does."""
