"""How many calls of one kind an account may have under way at once in a process.

Searches are the calls whose cost grows with what an account holds (a history search opens
every candidate the blind index returns); an account sending many at once would otherwise
keep every worker thread, the interpreter and the database busy with them. Each account's
searches beyond its limit wait on the event loop, holding no thread, while other accounts'
calls go on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class PerAccountLimit:
    """At most ``limit`` holders per account at a time; the others wait their turn in order.
    An account's count is dropped once nobody holds or waits, so idle accounts cost nothing."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the limit must be at least 1")
        self._limit = limit
        #: Per account with holders or waiters: its semaphore and how many hold or wait.
        self._gates: dict[str, tuple[asyncio.Semaphore, int]] = {}

    @asynccontextmanager
    async def slot(self, account_id: str) -> AsyncIterator[None]:
        gate, users = self._gates.get(account_id) or (asyncio.Semaphore(self._limit), 0)
        self._gates[account_id] = (gate, users + 1)
        try:
            async with gate:
                yield
        finally:
            gate, users = self._gates[account_id]
            if users == 1:
                del self._gates[account_id]
            else:
                self._gates[account_id] = (gate, users - 1)

    def accounts(self) -> int:
        """How many accounts hold or wait for a slot."""
        return len(self._gates)
