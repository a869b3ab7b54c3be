"""Searches beyond an account's limit wait on the event loop; other accounts' do not."""

import asyncio

from ctxmodes_remote.service.limits import PerAccountLimit


def test_an_accounts_second_holder_waits_and_another_account_does_not():
    async def scenario() -> list[str]:
        limit = PerAccountLimit(1)
        events: list[str] = []
        release = asyncio.Event()

        async def hold(account: str, name: str) -> None:
            async with limit.slot(account):
                events.append(f"{name} in")
                if name == "a1":
                    await release.wait()
            events.append(f"{name} out")

        first = asyncio.create_task(hold("a", "a1"))
        await asyncio.sleep(0)
        second = asyncio.create_task(hold("a", "a2"))
        other = asyncio.create_task(hold("b", "b1"))
        await asyncio.wait_for(other, 5)
        assert "a2 in" not in events
        assert limit.accounts() == 1
        release.set()
        await asyncio.wait_for(asyncio.gather(first, second), 5)
        assert limit.accounts() == 0
        return events

    events = asyncio.run(scenario())
    assert events.index("a1 out") < events.index("a2 in")
    assert events.index("b1 out") < events.index("a1 out")


def test_a_cancelled_waiter_leaves_no_count_behind():
    async def scenario() -> int:
        limit = PerAccountLimit(1)
        release = asyncio.Event()

        async def hold() -> None:
            async with limit.slot("a"):
                await release.wait()

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiter = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiter.cancel()
        release.set()
        await holder
        return limit.accounts()

    assert asyncio.run(scenario()) == 0
