"""An account that keeps several searches asked for at once takes turns while another
account is active, and only then."""

import asyncio

from ctxmodes_remote.service.limits import (
    ACTIVE_S,
    DEMAND_S,
    TURN_SHARE,
    TURNS_ABOVE,
    SearchTurns,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        """Until ``seconds`` from now: other tasks run meanwhile, and two that sleep until
        the same time wake at it together."""
        until = self.now + seconds
        self.slept.append(round(seconds, 6))
        for _ in range(3):
            await asyncio.sleep(0)
        self.now = max(self.now, until)


def _turns(clock: Clock) -> SearchTurns:
    return SearchTurns(clock, clock.sleep)


async def _searching(
    turns: SearchTurns, clock: Clock, account: str, at_once: int, family: str = "history"
) -> None:
    """``account`` keeps ``at_once`` searches of ``family`` asked for over a while (as many
    agents searching without pause do)."""
    release = asyncio.Event()

    async def search() -> None:
        async with turns.slot(account, family):
            await release.wait()

    searches = [asyncio.create_task(search()) for _ in range(at_once)]
    await asyncio.sleep(0)
    clock.now += 4 * DEMAND_S
    release.set()
    await asyncio.wait_for(asyncio.gather(*searches), 5)


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


def _after_searching(
    turns: SearchTurns,
    clock: Clock,
    at_once: int,
    *,
    pause_s: float = 0.0,
    then_seen: str | None = None,
) -> list[str]:
    """Alice's two searches at once, after she kept ``at_once`` asked for a while, then
    paused ``pause_s`` while ``then_seen`` (another account) was seen."""

    async def scenario() -> list[str]:
        await _searching(turns, clock, "alice", at_once)
        clock.now += pause_s
        if then_seen is not None:
            turns.saw(then_seen)
        return await _two_searches(turns, "alice")

    return asyncio.run(scenario())


def test_an_account_alone_searches_with_nothing_held_back():
    clock = Clock()
    turns = _turns(clock)
    turns.saw("alice")
    events = _after_searching(turns, clock, 4)
    assert events.index("second in") < events.index("first out")
    assert turns.under_way() == 0


def test_searches_take_turns_while_another_account_is_active():
    clock = Clock()
    turns = _turns(clock)
    turns.saw("alice")
    turns.saw("bob")
    events = _after_searching(turns, clock, 4, then_seen="bob")
    assert events.index("first out") < events.index("second in")


def test_an_account_searching_now_and_then_is_not_held_back():
    # One agent searching without pause keeps one search asked for: below the threshold.
    assert TURNS_ABOVE > 1
    clock = Clock()
    turns = _turns(clock)
    turns.saw("bob")
    turns.saw("alice")
    events = _after_searching(turns, clock, 1)
    assert events.index("second in") < events.index("first out")


def test_a_busy_account_that_goes_quiet_is_held_back_no_more():
    clock = Clock()
    turns = _turns(clock)
    turns.saw("alice")
    turns.saw("bob")
    events = _after_searching(turns, clock, 4, pause_s=4 * DEMAND_S, then_seen="bob")
    assert events.index("second in") < events.index("first out")


def test_another_account_counts_as_active_for_a_while_only():
    clock = Clock()
    turns = _turns(clock)
    turns.saw("bob")
    clock.now += ACTIVE_S + 0.1
    turns.saw("alice")
    events = _after_searching(turns, clock, 4)
    assert events.index("second in") < events.index("first out")


def _rests(others_active: bool) -> list[float]:
    """The waits before each of three searches of Alice's, one after another, the first two
    running 20 and 10 ms, after she kept 4 asked for a while."""
    clock = Clock()
    turns = _turns(clock)

    async def scenario() -> None:
        await _searching(turns, clock, "alice", 4)
        clock.slept.clear()
        for ran in (0.02, 0.01, 0.0):
            if others_active:
                turns.saw("bob")
            async with turns.slot("alice", "history"):
                clock.now += ran

    asyncio.run(asyncio.wait_for(scenario(), 5))
    return clock.slept


def test_an_account_taking_turns_searches_a_share_of_the_time():
    # After a search that ran d, the next starts d / TURN_SHARE after the first began.
    assert _rests(others_active=True) == [0.02 / TURN_SHARE - 0.02, 0.01 / TURN_SHARE - 0.01]
    assert 0 < TURN_SHARE < 1


def test_an_account_alone_searches_without_a_rest():
    assert _rests(others_active=False) == []


def test_families_take_turns_apart_and_accounts_do_not_wait_for_each_other():
    async def scenario(turns: SearchTurns, clock: Clock) -> bool:
        for account in ("alice", "bob"):
            for family in ("history", "notes"):
                await _searching(turns, clock, account, 4, family)
        turns.saw("alice")
        turns.saw("bob")
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

    clock = Clock()
    turns = _turns(clock)
    assert asyncio.run(asyncio.wait_for(scenario(turns, clock), 5))


def test_a_cancelled_waiter_leaves_nothing_behind():
    async def scenario(turns: SearchTurns, clock: Clock) -> tuple[bool, int]:
        await _searching(turns, clock, "alice", 4)
        turns.saw("alice")
        turns.saw("bob")
        release = asyncio.Event()

        async def hold() -> None:
            async with turns.slot("alice", "history"):
                await release.wait()

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiter = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waited = not waiter.done() and turns.under_way() == 1
        waiter.cancel()
        release.set()
        await holder
        return waited, turns.under_way()

    clock = Clock()
    turns = _turns(clock)
    assert asyncio.run(scenario(turns, clock)) == (True, 0)
