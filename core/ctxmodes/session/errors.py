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
    "SessionWriteError",
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


class SessionWriteError(SessionError):
    """Writing to a session file failed (a full disk, an I/O error); ``reason`` is the
    system's word for why.

    :ivar line_kept: the line is wholly in the file although the write is reported as failed
        (its ``fdatasync`` failed and the file could not be truncated back): the store
        counts it as appended, so that what it holds in memory stays what the file holds.
    """

    def __init__(
        self, what: str, reason: str | None, *, line_kept: bool = False, landed: int = 0
    ) -> None:
        super().__init__(f"{what}: {reason}" if reason else what)
        self.reason = reason
        self.line_kept = line_kept
        #: Bytes of the failed write that stay in the file (0 when it was truncated back).
        self.landed = landed
