"""What a plugin may read of the session store: :class:`SessionView`.

Hooks reach the store through ``session.session_manager``, typed as this read-only view (as
Pi hands extensions a read-only session manager): the entries, the active branch, the leaf,
lookups by id, labels and the tree, and a subscription to appends. A mode changes the
session only through its host — :meth:`~ctxmodes.hostapi.HostSession.append_entry`, the
``send_*`` methods, and :attr:`~ctxmodes.hostapi.HostSession.navigation` — so the host sees
every write in order. The store itself (:class:`ctxmodes.session.SessionManager`) satisfies
this protocol.

Internal module: its public names are imported from :mod:`ctxmodes`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ctxmodes.session.branch_path import BranchPath
    from ctxmodes.session.models import SessionEntry, SessionHeader
    from ctxmodes.session.store import StoredRun
    from ctxmodes.session.tree import SessionTreeNode


class SessionView(Protocol):
    """The session file as a plugin reads it (the leaf is the end of the active branch)."""

    @property
    def session_id(self) -> str: ...

    @property
    def session_file(self) -> Path | None:
        """``None`` for a session kept in memory."""

    @property
    def session_dir(self) -> Path | None:
        """Where the sessions of this working directory are kept (``None`` in memory)."""

    @property
    def cwd(self) -> str:
        """The working directory recorded in the session header."""

    @property
    def read_only(self) -> bool:
        """Whether this process opened the session only to read it (a plugin then writes
        nothing beside the file either)."""

    def get_header(self) -> SessionHeader | None: ...

    def get_session_name(self) -> str | None: ...

    def get_leaf_id(self) -> str | None: ...

    def get_leaf_entry(self) -> SessionEntry | None: ...

    def get_entry(self, entry_id: str) -> SessionEntry | None: ...

    def get_entry_json(self, entry_id: str) -> dict[str, Any] | None:
        """An entry as stored, without decoding it; treat as read-only."""

    def read_entries_json(self, entry_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """Several entries as stored (``None`` for an unknown id), read in one pass and not
        kept: for reading through many entries once, a block at a time."""

    def get_entries(self) -> Sequence[SessionEntry]:
        """Every entry in file order."""

    def get_label(self, entry_id: str) -> str | None: ...

    def get_parent_id(self, entry_id: str) -> str | None: ...

    def get_branch(self, from_id: str | None = None) -> Sequence[SessionEntry]:
        """Entries from the root to ``from_id`` (default: the leaf)."""

    def get_branch_ids(self, from_id: str | None = None) -> list[str]: ...

    def get_branch_types(self, from_id: str | None = None) -> list[object]:
        """The stored ``type`` of each entry of :meth:`get_branch_ids`, decoding none."""

    def get_branch_path(self, from_id: str) -> BranchPath:
        """The ids of :meth:`get_branch_ids`, checked in O(runs of consecutive lines)."""

    def stored_run(self, last_id: str, count: int) -> StoredRun | None:
        """The ``count`` entries ending at ``last_id``, when they are consecutive lines."""

    def get_tree(self) -> list[SessionTreeNode]: ...

    def subscribe(self, callback: Callable[[SessionEntry], None]) -> Callable[[], None]:
        """Call ``callback`` with every entry appended from now on; returns an unsubscribe."""


__all__ = ["SessionView"]
