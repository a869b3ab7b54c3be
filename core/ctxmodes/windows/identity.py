"""Which context window the session is in: first, current and previous window ids and the
zero-based window number.

Identity is never kept anywhere but in the persisted window markers; :class:`IdentityTracker`
rebuilds it by reading them, so a resumed session continues with the same ids and numbering.
A managed session without any window marker has no identity yet; the mode then appends
window 0 (see :func:`ctxmodes.windows.marker.window_marker`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmodes.windows.marker import ContextManagementDetails


def new_window_id() -> str:
    """A fresh window id: a random lowercase UUID, as the extension mints them."""
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class WindowIdentity:
    """The lineage of one context window.

    ``previous_window_id`` is ``None`` exactly for window 0 (a session can also restart its
    numbering at 0 when management is enabled again on a branch without markers).
    """

    first_window_id: str
    current_window_id: str
    previous_window_id: str | None
    window_number: int

    @classmethod
    def first(cls, window_id: str | None = None) -> WindowIdentity:
        """Window 0 of a session: its own first window."""
        current = window_id or new_window_id()
        return cls(current, current, None, 0)

    def advance(self, window_id: str | None = None) -> WindowIdentity:
        """The window that follows this one: same first id, this one as previous."""
        return WindowIdentity(
            first_window_id=self.first_window_id,
            current_window_id=window_id or new_window_id(),
            previous_window_id=self.current_window_id,
            window_number=self.window_number + 1,
        )


def next_identity(current: WindowIdentity | None, window_id: str | None = None) -> WindowIdentity:
    """The identity of the window a rollover opens: window 0 when none exists yet."""
    if current is None:
        return WindowIdentity.first(window_id)
    return current.advance(window_id)


class IdentityTracker:
    """The current window identity and its boundary entry, fed marker by marker.

    Feed it the markers of the active branch in order (through
    :class:`ctxmodes.windows.state.WindowState`); only ``kind: "window"`` markers change the
    identity, reminders and fallbacks leave it alone.
    """

    __slots__ = ("_boundary_entry_id", "_identity")

    def __init__(self) -> None:
        self._identity: WindowIdentity | None = None
        self._boundary_entry_id: str | None = None

    @property
    def identity(self) -> WindowIdentity | None:
        """The current window, or ``None`` when no window marker was seen."""
        return self._identity

    @property
    def boundary_entry_id(self) -> str | None:
        """The id of the entry holding the latest window marker."""
        return self._boundary_entry_id

    def observe_marker(self, entry_id: str, details: ContextManagementDetails) -> None:
        """Take a persisted marker into account."""
        if details.kind == "window":
            self._identity = details.identity()
            self._boundary_entry_id = entry_id
