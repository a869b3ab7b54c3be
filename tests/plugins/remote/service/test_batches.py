"""Calls sharing a statement while one of their kind is under way (any database: the
statements here are functions that record what they were sent)."""

import asyncio

import pytest

from ctxmodes_remote.service.batches import StatementBatches
from ctxmodes_remote.service.storage import StorageUnavailableError


class Statements:
    """``alone`` and ``together`` for :class:`StatementBatches`: each records the calls it
    was sent and answers after ``gate`` opens (open from the start unless closed)."""

    def __init__(self, fail_together=None):
        self.sent: list[tuple[str, list[int]]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail_together = fail_together

    async def alone(self, call):
        self.sent.append(("alone", [call]))
        await self.gate.wait()
        return call * 10

    async def together(self, calls):
        self.sent.append(("together", list(calls)))
        await self.gate.wait()
        if self.fail_together is not None:
            raise self.fail_together
        return [call * 10 for call in calls]


async def one_under_way(limit=8, fail_together=None):
    """Batches whose first call is under way (alone, its statement waiting for the gate)."""
    statements = Statements(fail_together)
    statements.gate.clear()
    batches = StatementBatches(statements.alone, statements.together, limit)
    first = asyncio.ensure_future(batches.call(1))
    await asyncio.sleep(0)
    return statements, batches, first


def test_a_call_with_none_under_way_goes_at_once_alone():
    async def main():
        statements = Statements()
        batches = StatementBatches(statements.alone, statements.together, 8)
        assert [await batches.call(n) for n in (1, 2)] == [10, 20]
        return statements.sent

    assert asyncio.run(main()) == [("alone", [1]), ("alone", [2])]


def test_calls_made_while_one_is_under_way_share_a_statement_in_order():
    async def main():
        statements, batches, first = await one_under_way(limit=3)
        # Made in one turn of the loop while the first is under way: two statements of at
        # most three calls.
        others = asyncio.ensure_future(asyncio.gather(*(batches.call(n) for n in range(2, 7))))
        await asyncio.sleep(0.01)
        statements.gate.set()
        return await first, await others, statements.sent

    first, others, sent = asyncio.run(main())
    assert first == 10
    assert others == [20, 30, 40, 50, 60]
    assert sent == [("alone", [1]), ("together", [2, 3, 4]), ("together", [5, 6])]


def test_a_call_left_alone_in_its_turn_sends_its_own_statement():
    async def main():
        statements, batches, first = await one_under_way()
        second = asyncio.ensure_future(batches.call(2))
        await asyncio.sleep(0.01)
        statements.gate.set()
        return await first, await second, statements.sent

    assert asyncio.run(main()) == (10, 20, [("alone", [1]), ("alone", [2])])


@pytest.mark.parametrize(
    "failure", [StorageUnavailableError("the database failed: gone"), ValueError("bad row")]
)
def test_a_statement_that_fails_fails_every_call_it_carried(failure):
    async def main():
        statements, batches, first = await one_under_way(fail_together=failure)
        carried = asyncio.gather(batches.call(2), batches.call(3), return_exceptions=True)
        await asyncio.sleep(0.01)
        statements.gate.set()
        return await first, await carried

    first, carried = asyncio.run(main())
    assert first == 10  # its own statement did not fail
    assert [type(error) for error in carried] == [type(failure)] * 2
    assert all(str(error) == str(failure) for error in carried)
    if isinstance(failure, StorageUnavailableError):
        # A copy each: one caller's traceback is not written into another's.
        assert carried[0] is not carried[1]


def test_a_caller_gone_before_its_statement_is_sent_is_left_out():
    async def main():
        statements, batches, first = await one_under_way()
        gone = asyncio.ensure_future(batches.call(2))
        kept = [asyncio.ensure_future(batches.call(n)) for n in (3, 4)]
        await asyncio.sleep(0)  # the three wait for the end of this turn of the loop
        gone.cancel()
        await asyncio.sleep(0.01)
        statements.gate.set()
        await batches.settle()
        return await first, [await call for call in kept], statements.sent

    first, kept, sent = asyncio.run(main())
    assert (first, kept) == (10, [30, 40])
    assert sent == [("alone", [1]), ("together", [3, 4])]
