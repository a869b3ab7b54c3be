"""Searches take turns within an account that keeps several under way while the process
serves other accounts.

Searches are the calls whose cost grows with what an account holds (a history search has the
database find every candidate the blind index returns, and opens each; a notes search scans
the session's notes). An account sending many at once would keep every worker thread, the
interpreter and the database busy with them. So while another account has been seen within
:data:`ACTIVE_S`, an account that has kept more than :data:`TURNS_ABOVE` searches of a
family asked for at a time, on average over the last moments (:data:`DEMAND_S`), has one of
them under way at a time, the others waiting on the event loop, holding no thread, and
searches of that family under way at most :data:`TURN_SHARE` of the time: after one that ran
``d`` seconds, the next waits ``d`` (the helper processes and the database the searches keep
busy are the other accounts' too, and its searches would follow one another without a
break). An account that searches now and then (a few agents, each searching between other
calls) is not held back: its searches never wait for each other. An account alone in the
process searches with nothing held back.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

#: Seconds an account counts as active after its last request.
ACTIVE_S = 1.0
#: The time constant (seconds) of an account's average number of searches asked for.
DEMAND_S = 0.25
#: The average number of searches of a family asked for at a time above which an account
#: takes turns: one agent searching without pause stays below it, two do not.
TURNS_ABOVE = 1.5
#: The share of the time an account taking turns has a search of a family under way.
TURN_SHARE = 0.5


class _Demand:
    """Searches of one account and family asked for (waiting or under way), now and as a
    time average that forgets with :data:`DEMAND_S`."""

    __slots__ = ("asked", "average", "since")

    def __init__(self, now: float) -> None:
        self.asked = 0
        self.average = 0.0
        self.since = now

    def settle(self, now: float) -> float:
        """The average up to ``now``."""
        kept = math.exp(-max(0.0, now - self.since) / DEMAND_S)
        self.average = self.average * kept + self.asked * (1.0 - kept)
        self.since = now
        return self.average


class SearchTurns:
    """Who was seen lately, and the searches asked for and under way per account and
    family."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        #: When each account was last seen (only those seen within :data:`ACTIVE_S`).
        self._seen: dict[str, float] = {}
        #: Searches under way per ``(account, family)``.
        self._running: dict[tuple[str, str], int] = {}
        self._demand: dict[tuple[str, str], _Demand] = {}
        self._waiters: list[asyncio.Future[None]] = []
        #: When the next search may start, per ``(account, family)`` taking turns.
        self._rest_until: dict[tuple[str, str], float] = {}

    def saw(self, account_id: str) -> None:
        """Note a request of ``account_id``."""
        self._seen[account_id] = self._clock()

    def _others_active(self, account_id: str) -> bool:
        horizon = self._clock() - ACTIVE_S
        for account, seen in list(self._seen.items()):
            if seen < horizon:
                del self._seen[account]
                for key in [key for key in self._demand if key[0] == account]:
                    if not self._demand[key].asked:
                        del self._demand[key]
                        self._rest_until.pop(key, None)
        return any(account != account_id for account in self._seen)

    def _takes_turns(self, key: tuple[str, str]) -> bool:
        return self._demand[key].settle(self._clock()) > TURNS_ABOVE and self._others_active(key[0])

    def _ask(self, key: tuple[str, str], change: int) -> None:
        demand = self._demand.get(key)
        if demand is None:
            demand = self._demand[key] = _Demand(self._clock())
        demand.settle(self._clock())
        demand.asked += change

    @asynccontextmanager
    async def slot(self, account_id: str, family: str) -> AsyncIterator[None]:
        """Hold a search's turn for as long as the block runs."""
        key = (account_id, family)
        self._ask(key, 1)
        try:
            while True:
                while self._running.get(key, 0) and self._takes_turns(key):
                    waiter = asyncio.get_running_loop().create_future()
                    self._waiters.append(waiter)
                    try:
                        await waiter
                    finally:
                        with contextlib.suppress(ValueError):
                            self._waiters.remove(waiter)
                rest = self._rest_until.get(key, 0.0) - self._clock()
                if rest <= 0 or not self._takes_turns(key):
                    break
                await self._sleep(rest)
            self._running[key] = self._running.get(key, 0) + 1
            started = self._clock()
            try:
                yield
            finally:
                left = self._running.pop(key) - 1
                if left:
                    self._running[key] = left
                if self._takes_turns(key):
                    ended = self._clock()
                    ran = ended - started
                    self._rest_until[key] = ended + ran / TURN_SHARE - ran
                # Every waiter looks again (its own account's turn, or nobody else active).
                waiters, self._waiters = self._waiters, []
                for waiter in waiters:
                    if not waiter.done():
                        waiter.set_result(None)
        finally:
            self._ask(key, -1)

    def under_way(self) -> int:
        """How many searches hold a turn."""
        return sum(self._running.values())
