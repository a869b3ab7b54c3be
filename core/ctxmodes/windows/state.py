"""Everything the context-window contract tracks about the active branch, in one place.

:class:`WindowState` is built from the branch once (:meth:`WindowState.from_stored_branch`)
and then fed each appended entry (:meth:`WindowState.observe_stored`, e.g. from the session
manager's ``subscribe``). It keeps the window identity, the budget flags, the history index,
the notes and the pending one-time trim, all incremental. An entry whose parent is not the
current leaf means the leaf moved (tree navigation, a branch, a reset): observing it raises
:class:`BranchMovedError`, and the owner rebuilds the state from the new branch.
:class:`TrackedWindowState` does that bookkeeping for a session's
:class:`~ctxmodes.session_view.SessionView`.

Entries are read in their stored form (:mod:`ctxmodes.windows.stored`), so a rebuild from a
long branch decodes no model; ``from_branch`` and ``observe`` take entry models instead. A
rebuild from a session manager reads, before the branch's first window marker, only the
entries that can be markers or notes (found by type, without decoding the others): a long
Pi session switched to a managed mode costs what its managed part costs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from ctxmodes.errors import CtxmodesError
from ctxmodes.session.models import SessionEntry
from ctxmodes.windows.budget import BudgetTracker
from ctxmodes.windows.compaction import parse_no_summary_details
from ctxmodes.windows.history import HistorySource
from ctxmodes.windows.history_index import BranchHistoryIndex
from ctxmodes.windows.history_reader import HistoryReader
from ctxmodes.windows.identity import IdentityTracker, WindowIdentity, next_identity
from ctxmodes.windows.marker import (
    MalformedMarkerError,
    WindowMarker,
    stored_marker_details,
    window_marker,
)
from ctxmodes.windows.notes import NotesStore
from ctxmodes.windows.stored import StoredEntry, parent_id, stored_entries, stored_form
from ctxmodes.windows.thread_hint import (
    RECOVERY_USER_ITEM_LIMIT,
    PreviousWindowIds,
    render_thread_hint,
)

if TYPE_CHECKING:
    from ctxmodes.session_view import SessionView

#: Before the first window marker only these entries mean anything to the window state:
#: markers are custom messages, notes and note snapshots are custom entries.
_READ_BEFORE_FIRST_WINDOW: Final = frozenset({"custom_message", "custom"})


class BranchMovedError(CtxmodesError):
    """An observed entry does not extend the branch the window state follows."""


class WindowState:
    """Identity, budget, history, notes and trim state of the active branch."""

    __slots__ = ("_leaf_id", "_trim_window_id", "budget", "history", "identity", "notes")

    def __init__(self) -> None:
        self.identity = IdentityTracker()
        self.budget = BudgetTracker()
        self.history = BranchHistoryIndex()
        self.notes = NotesStore()
        self._leaf_id: str | None = None
        self._trim_window_id: str | None = None

    @classmethod
    def from_stored_branch(cls, branch: Sequence[StoredEntry]) -> WindowState:
        """The state at the end of ``branch`` (root first, stored form)."""
        state = cls()
        for entry in branch:
            state._apply(entry)
        state.notes = NotesStore.from_stored_branch(branch)
        return state

    @classmethod
    def from_branch(cls, branch: Iterable[SessionEntry]) -> WindowState:
        """The state at the end of ``branch`` (root first, as ``get_branch()`` returns it)."""
        return cls.from_stored_branch([stored_form(entry) for entry in branch])

    @property
    def leaf_id(self) -> str | None:
        """The last entry observed."""
        return self._leaf_id

    @property
    def current(self) -> WindowIdentity | None:
        """The current window, ``None`` before the first window marker."""
        return self.identity.identity

    @property
    def pending_trim_window_id(self) -> str | None:
        """The window whose boundary the next threshold compaction may cut at once: set by a
        marker with ``trimPreviousWindow``, cleared by a no-summary compaction recorded for
        that window or by the next window marker."""
        return self._trim_window_id

    def observe_stored(self, entry: StoredEntry) -> None:
        """Account for an entry (stored form) appended to the branch.

        :raises BranchMovedError: ``entry`` is not a child of the current leaf.
        """
        if parent_id(entry) != self._leaf_id:
            raise BranchMovedError(
                f"entry {entry.get('id')} does not extend the active branch at "
                f"{self._leaf_id}; rebuild the window state from the new branch"
            )
        self._apply(entry)
        self.notes.observe_stored(entry)

    def observe(self, entry: SessionEntry) -> None:
        """:meth:`observe_stored` for an entry model."""
        self.observe_stored(stored_form(entry))

    def _apply(self, entry: StoredEntry) -> None:
        self._leaf_id = entry.get("id")
        self.history.observe_stored(entry)
        try:
            marker = stored_marker_details(entry)
        except MalformedMarkerError:
            return
        if marker is not None:
            self.identity.observe_marker(entry["id"], marker)
            self.budget.observe_marker(marker)
            if marker.kind == "window":
                trim = marker.trim_previous_window
                self._trim_window_id = marker.current_window_id if trim else None
        elif entry.get("type") == "compaction" and self._trim_window_id is not None:
            details = parse_no_summary_details(entry.get("details"))
            if details is not None and details.window_id == self._trim_window_id:
                self._trim_window_id = None

    def reader(self, *archives: HistorySource) -> HistoryReader:
        """A history reader over ``archives`` (Tree's archived windows) and this branch."""
        return HistoryReader([*archives, self.history], summary_first=bool(archives))

    def initial_window_marker(self) -> WindowMarker | None:
        """Window 0's marker when the branch has no window yet, else ``None``."""
        if self.current is not None:
            return None
        return window_marker(WindowIdentity.first())

    def previous_window_ids(self, summary_item_id: str | None = None) -> PreviousWindowIds | None:
        """History ids of the branch's latest window, as the next window's hint names them."""
        window = self.history.current_window
        if window is None:
            return None
        return PreviousWindowIds(
            window_id=window.window_id,
            user_item_ids=window.recent_item_ids("user", RECOVERY_USER_ITEM_LIMIT),
            summary_item_id=summary_item_id,
        )

    def thread_hint(self, previous: PreviousWindowIds | None = None) -> str | None:
        """The hint for a window opened now: recent notes and ``previous`` (by default the
        latest window of this branch)."""
        return render_thread_hint(self.notes, previous or self.previous_window_ids())

    def next_window_marker(
        self,
        *,
        trim_previous_window: bool = False,
        previous: PreviousWindowIds | None = None,
        identity: WindowIdentity | None = None,
    ) -> WindowMarker:
        """The marker of the window a rollover opens now.

        :param previous: what the hint names as the closed window (Tree passes its archive's
            window and summary item); by default this branch's latest window.
        :param identity: the identity to continue from (Tree carries it across the cut);
            by default the branch's current one. Without any, the marker opens window 0.
        """
        base = identity if identity is not None else self.current
        hint = self.thread_hint(previous) if base is not None else None
        return window_marker(next_identity(base), hint, trim_previous_window=trim_previous_window)


class TrackedWindowState:
    """A :class:`WindowState` kept in step with a session manager.

    Subscribes to the manager's appends and follows the leaf; when the leaf moves anywhere
    but forward (tree navigation, ``branch``, ``reset_leaf``), the next access to
    :attr:`state` rebuilds from the new branch, once. Appends are never interrupted: a
    subscriber that raised would fail whoever appended.
    """

    __slots__ = ("_manager", "_stale", "_state", "_unsubscribe")

    def __init__(self, manager: SessionView) -> None:
        self._manager = manager
        self._state = _branch_state(manager)
        self._stale = False
        self._unsubscribe = manager.subscribe(self._on_append)

    @property
    def state(self) -> WindowState:
        """The state of the manager's current branch."""
        if self._stale or self._state.leaf_id != self._manager.get_leaf_id():
            self._state = _branch_state(self._manager)
            self._stale = False
        return self._state

    def _on_append(self, entry: SessionEntry) -> None:
        if self._stale:
            return
        if entry.parent_id != self._state.leaf_id:
            self._stale = True
            return
        # The store holds what it just appended as stored JSON: no model is dumped.
        stored = self._manager.get_entry_json(entry.id)
        self._state.observe_stored(stored if stored is not None else stored_form(entry))

    def close(self) -> None:
        """Stop following the manager."""
        self._unsubscribe()


def _branch_state(manager: SessionView) -> WindowState:
    """The state at the manager's leaf, decoding only the entries it can depend on."""
    ids = manager.get_branch_ids()
    read: list[StoredEntry] = []
    for position, entry_type in enumerate(manager.get_branch_types()):
        if entry_type not in _READ_BEFORE_FIRST_WINDOW:
            continue
        entry = manager.get_entry_json(ids[position])
        if entry is None:
            continue
        read.append(entry)
        if _opens_window(entry):
            read.extend(stored_entries(manager, ids[position + 1 :]))
            break
    state = WindowState.from_stored_branch(read)
    # Entries skipped at the end of the branch are still where the state stands.
    state._leaf_id = ids[-1] if ids else None
    return state


def _opens_window(entry: StoredEntry) -> bool:
    try:
        marker = stored_marker_details(entry)
    except MalformedMarkerError:
        return False
    return marker is not None and marker.kind == "window"
