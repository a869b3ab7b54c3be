"""Calls of one kind to the database that share a statement while one is under way.

A call made while no statement of its kind is under way goes at once, alone: a lone agent
waits for nothing. Those made while one is are sent at the end of that turn of the event
loop, together in one statement of at most ``limit`` of them: one round trip (and, for
writes, one commit) for all of them costs the process, and the database, far less than one
each, and none waits for another statement to end. Each call is answered once its statement
has; a statement that fails fails every call it carried.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar, cast

from ctxmodes_remote.service.storage import StorageUnavailableError

_Call = TypeVar("_Call")
#: What a call waiting for others is answered when none came: it goes alone.
_ALONE = object()
_Answer = TypeVar("_Answer")
_T = TypeVar("_T")


class StatementBatches(Generic[_Call, _Answer]):
    """Calls answered by ``alone`` (one call, one statement) or ``together`` (the calls
    sent together, one statement; their answers in the calls' order), at most ``limit`` a
    statement."""

    def __init__(
        self,
        alone: Callable[[_Call], Awaitable[_Answer]],
        together: Callable[[Sequence[_Call]], Awaitable[Sequence[_Answer]]],
        limit: int,
    ) -> None:
        self._alone = alone
        self._together = together
        self._limit = limit
        #: Calls made in this turn of the loop, waiting for their statement.
        self._waiting: list[tuple[_Call, asyncio.Future[object]]] = []
        #: Statements sent together (kept here: the loop holds a task only weakly).
        self._sending: set[asyncio.Task[None]] = set()
        self._under_way = 0

    async def call(self, call: _Call) -> _Answer:
        if self._under_way:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[object] = loop.create_future()
            if not self._waiting:
                loop.call_soon(self._send)
            self._waiting.append((call, future))
            answer = await future
            if answer is not _ALONE:
                return cast(_Answer, answer)
        return await self._statement(self._alone(call))

    async def settle(self) -> None:
        """Wait for the statements sent together to end."""
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    async def _statement(self, statement: Awaitable[_T]) -> _T:
        """``statement``'s outcome, counted as under way while it runs."""
        self._under_way += 1
        try:
            return await statement
        finally:
            self._under_way -= 1

    def _send(self) -> None:
        """Send the calls made in this turn of the loop (those whose caller has gone are left
        out)."""
        waiting = [call for call in self._waiting if not call[1].done()]
        self._waiting = []
        if len(waiting) == 1:
            # Alone after all: its caller sends it, with no task to make.
            waiting[0][1].set_result(_ALONE)
            return
        for start in range(0, len(waiting), self._limit):
            task = asyncio.ensure_future(self._run(waiting[start : start + self._limit]))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _run(self, batch: list[tuple[_Call, asyncio.Future[object]]]) -> None:
        calls = [call for call, _ in batch]
        try:
            answers = await self._statement(self._together(calls))
        except BaseException as error:
            for _, future in batch:
                if not future.done():
                    # The storage's failure, a copy each (each caller's traceback its own).
                    future.set_exception(
                        StorageUnavailableError(str(error))
                        if isinstance(error, StorageUnavailableError)
                        else error
                    )
            if not isinstance(error, Exception):
                raise
            return
        for (_, future), answer in zip(batch, answers, strict=True):
            if not future.done():
                future.set_result(answer)
