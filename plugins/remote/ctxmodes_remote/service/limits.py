"""Searches take turns within an account while the process serves other accounts.

Searches are the calls whose cost grows with what an account holds (a history search has the
database find every candidate the blind index returns, and opens each; a notes search scans
the session's notes). An account sending many at once would keep every worker thread, the
interpreter and the database busy with them. So while another account has been seen within
:data:`ACTIVE_S`, each account has one search of a family under way at a time, the others
waiting on the event loop, holding no thread; an account alone in the process searches
with nothing held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

#: Seconds an account counts as active after its last request.
ACTIVE_S = 1.0


class SearchTurns:
    """Who was seen lately, and the searches under way per account and family."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        #: When each account was last seen (only those seen within :data:`ACTIVE_S`).
        self._seen: dict[str, float] = {}
        #: Searches under way per ``(account, family)``.
        self._running: dict[tuple[str, str], int] = {}
        self._waiters: list[asyncio.Future[None]] = []

    def saw(self, account_id: str) -> None:
        """Note a request of ``account_id``."""
        self._seen[account_id] = self._clock()

    def _others_active(self, account_id: str) -> bool:
        horizon = self._clock() - ACTIVE_S
        for account, seen in list(self._seen.items()):
            if seen < horizon:
                del self._seen[account]
        return any(account != account_id for account in self._seen)

    @asynccontextmanager
    async def slot(self, account_id: str, family: str) -> AsyncIterator[None]:
        """Hold a search's turn for as long as the block runs."""
        key = (account_id, family)
        while self._running.get(key, 0) and self._others_active(account_id):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
        self._running[key] = self._running.get(key, 0) + 1
        try:
            yield
        finally:
            left = self._running.pop(key) - 1
            if left:
                self._running[key] = left
            # Every waiter looks again (its own account's turn, or nobody else active).
            waiters, self._waiters = self._waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    def under_way(self) -> int:
        """How many searches hold a turn."""
        return sum(self._running.values())
