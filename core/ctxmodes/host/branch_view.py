"""The active branch handed to ``ctx_project_context``, read only if a plugin asks for it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

from ctxmodes.session.models import SessionEntry

if TYPE_CHECKING:
    from ctxmodes.session.manager import SessionManager


class LazyBranch(Sequence[SessionEntry]):
    """The root-to-leaf entries at the time of the first access.

    Most projections never look at the branch, so a turn does not pay for listing it; a
    plugin that does gets the manager's branch, decoded entry by entry as it reads.
    """

    __slots__ = ("_entries", "_manager")

    def __init__(self, manager: SessionManager) -> None:
        self._manager = manager
        self._entries: Sequence[SessionEntry] | None = None

    def _branch(self) -> Sequence[SessionEntry]:
        if self._entries is None:
            self._entries = self._manager.get_branch()
        return self._entries

    def __len__(self) -> int:
        return len(self._branch())

    def __iter__(self) -> Iterator[SessionEntry]:
        return iter(self._branch())

    @overload
    def __getitem__(self, index: int) -> SessionEntry: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEntry]: ...
    def __getitem__(self, index: int | slice) -> SessionEntry | Sequence[SessionEntry]:
        return self._branch()[index]
