"""An account's searches take turns while another account is active, and only then."""

import asyncio

from ctxmodes_remote.service.limits import ACTIVE_S, SearchTurns


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def _two_searches(turns: SearchTurns, account: str, family: str = "history") -> list[str]:
    """Two searches of ``account`` at once; the order of their entering and leaving."""
    events: list[str] = []
    release = asyncio.Event()

    async def search(name: str) -> None:
        async with turns.slot(account, family):
            events.append(f"{name} in")
            if name == "first":
                await release.wait()
        events.append(f"{name} out")

    first = asyncio.create_task(search("first"))
    await asyncio.sleep(0)
    second = asyncio.create_task(search("second"))
    for _ in range(5):
        await asyncio.sleep(0)
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), 5)
    return events


def test_an_account_alone_searches_with_nothing_held_back():
    turns = SearchTurns(Clock())
    turns.saw("alice")
    events = asyncio.run(_two_searches(turns, "alice"))
    assert events.index("second in") < events.index("first out")
    assert turns.under_way() == 0


def test_searches_take_turns_while_another_account_is_active():
    turns = SearchTurns(Clock())
    turns.saw("alice")
    turns.saw("bob")
    events = asyncio.run(_two_searches(turns, "alice"))
    assert events.index("first out") < events.index("second in")


def test_another_account_counts_as_active_for_a_while_only():
    clock = Clock()
    turns = SearchTurns(clock)
    turns.saw("bob")
    clock.now += ACTIVE_S + 0.1
    turns.saw("alice")
    events = asyncio.run(_two_searches(turns, "alice"))
    assert events.index("second in") < events.index("first out")


def test_families_take_turns_apart_and_accounts_do_not_wait_for_each_other():
    async def scenario(turns: SearchTurns) -> bool:
        held = asyncio.Event()
        release = asyncio.Event()

        async def hold() -> None:
            async with turns.slot("alice", "history"):
                held.set()
                await release.wait()

        holder = asyncio.create_task(hold())
        await held.wait()
        async with turns.slot("alice", "notes"), turns.slot("bob", "history"):
            both = turns.under_way() == 3
        release.set()
        await holder
        return both

    turns = SearchTurns(Clock())
    turns.saw("alice")
    turns.saw("bob")
    assert asyncio.run(asyncio.wait_for(scenario(turns), 5))


def test_a_cancelled_waiter_leaves_nothing_behind():
    async def scenario(turns: SearchTurns) -> int:
        release = asyncio.Event()

        async def hold() -> None:
            async with turns.slot("alice", "history"):
                await release.wait()

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiter = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiter.cancel()
        release.set()
        await holder
        return turns.under_way()

    turns = SearchTurns(Clock())
    turns.saw("alice")
    turns.saw("bob")
    assert asyncio.run(scenario(turns)) == 0
