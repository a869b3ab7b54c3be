"""The service's worker threads: each runs the engine calls given to it one at a time,
sharing its time fairly between the accounts with calls waiting.

A plain executor runs calls in arrival order, so an account that sends many slow calls
(heavy searches, say) puts every other account's calls behind all of them. Here the next call
is always one of the account that has had the least of the thread's time while it waited
(start-time fair queuing): an account's cheap calls wait behind at most one slice of a slow
call of another, and an account that was idle gains no credit to spend later.

A long call bounds its slices itself: it calls :func:`yield_turn` as it goes (a history
search does between candidates), and once it has run for :data:`SLICE_S` the calls of other
accounts owed time run there and then, on the same thread, before it goes on. Calls of the
paused call's own account never run in between, so each account's calls (and so each
session's) still run one at a time, in order. A call that waits for work done elsewhere (a
helper process checking search candidates) waits with :func:`wait_serving`, and the calls of
other accounts run meanwhile.

With group commit (:class:`HeldWrites`, SQLite), calls that ran while writes were held are
answered only once those writes are committed: the worker runs the calls waiting, then
commits them all with one sync once no call is waiting (or the group is :data:`GROUP_CALLS`
calls or :data:`GROUP_SECONDS` old), and then answers them, with one wake-up of the event
loop for all of them. Before it commits a group of fewer than :data:`GROUP_TARGET` calls, the
worker waits a little (at most :data:`GROUP_WAIT_S` without a new call) for the sessions it
answered within :data:`RECENT_SESSION_S` that have no call in the group yet: sessions that
keep calling send their next call as soon as they have their answer, and a commit costs
about what a write does (its sync), so a commit that waits for them costs less a write. A
lone session, or one whose call is already in the group, waits for nothing. Calls run during
a pause are committed when the pause ends, not held behind the long call.

The calls about one session take turns wherever they run (:class:`SessionTurns`), in arrival
order. Note reads (and on Postgres note writes), which the storage answers on the event loop,
run there, not on a worker: each takes little CPU whatever the session holds, and awaits its one
database round trip, so they share the loop in arrival order, and no account's slow calls on
the workers hold them up.

A call submitted from the event loop (:meth:`FairWorker.submit_from_loop`) is answered on an
asyncio future the worker settles through the loop directly: no thread-side future, no
chaining of one future to another (a tenth of the cost of a hop, measured).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

_T = TypeVar("_T")


class _Reply(Protocol):
    """Where a call's outcome goes."""

    def start(self) -> bool:
        """Whether the call is still wanted (it was not cancelled), as it starts."""
        ...

    def settle(self, result: Any, error: BaseException | None) -> None: ...


class _ThreadReply:
    """The outcome goes to a :class:`concurrent.futures.Future`."""

    __slots__ = ("future",)

    def __init__(self, future: Future[Any]) -> None:
        self.future = future

    def start(self) -> bool:
        return self.future.set_running_or_notify_cancel()

    def settle(self, result: Any, error: BaseException | None) -> None:
        if error is None:
            self.future.set_result(result)
        else:
            self.future.set_exception(error)


class _LoopReply:
    """The outcome goes to an asyncio future, set on its loop."""

    __slots__ = ("future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> None:
        self.loop = loop
        self.future = future

    def start(self) -> bool:
        # Read off the loop's thread: a cancellation that lands after this check finds the
        # call running, and its outcome is dropped (as for a thread-side future).
        return not self.future.cancelled()

    def settle(self, result: Any, error: BaseException | None) -> None:
        # A closed loop refuses the call: nobody waits for the answer any more.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(_settle_on_loop, self.future, result, error)


def _settle_on_loop(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


#: A call, where its outcome goes, whether it may run while another call is paused, and the
#: session it is about (``None``: no session, or not told).
_Job = tuple[Callable[[], Any], _Reply, bool, Hashable | None]
#: Calls run while writes are held, with their outcome: ``(reply, result, error)``.
_Held = tuple[_Reply, Any, BaseException | None]

#: The most calls one group commit answers, and the longest it stays open (seconds): a
#: steady stream of calls is committed in steps, not held indefinitely.
GROUP_CALLS = 64
GROUP_SECONDS = 0.005
#: The longest a group's commit waits without a new call for sessions answered within
#: :data:`RECENT_SESSION_S` (seconds each), and the group size it waits to reach at most: a
#: larger group saves little more per write, and holding its calls back for stragglers keeps
#: the clients and the service from working at once.
GROUP_WAIT_S = 0.001
RECENT_SESSION_S = 0.02
GROUP_TARGET = 8
#: Seconds a call runs before :func:`yield_turn` lets other accounts' calls in.
SLICE_S = 0.002

_local = threading.local()


def yield_turn() -> None:
    """Called by a long call between steps of its work: when it has run for a slice, run
    the calls of other accounts owed time first. Does nothing off a worker thread."""
    worker: FairWorker | None = getattr(_local, "worker", None)
    if worker is not None:
        worker._pause()


def on_worker() -> bool:
    """Whether this thread is a worker's, where :func:`wait_serving` serves other calls."""
    return getattr(_local, "worker", None) is not None


def wait_serving(future: Future[_T]) -> _T:
    """The result of ``future``, which is produced off this thread; on a worker thread, other
    accounts' calls run there until it is ready."""
    worker: FairWorker | None = getattr(_local, "worker", None)
    if worker is not None:
        worker._serve_until(future)
    return future.result()


class HeldWrites(Protocol):
    """Storage whose writes are held until committed in a group."""

    def writes_pending(self) -> bool:
        """Whether the calls run since the last commit must wait for the next."""
        ...

    def commit_writes(self) -> None:
        """:raises Exception: nothing held is on disk."""
        ...


class _Running:
    """A call under way on the thread: its account, and when its current slice began."""

    __slots__ = ("account", "since")

    def __init__(self, account: str) -> None:
        self.account = account
        self.since = time.perf_counter()


class FairWorker:
    """One thread running submitted calls one at a time, the least served account first."""

    def __init__(self, name: str, held: HeldWrites | None = None) -> None:
        self._held_writes = held
        #: Calls answered once the writes pending are committed, and when the first ran.
        self._held: list[_Held] = []
        self._group_opened = 0.0
        #: The sessions of the calls held, and when each session last had a call answered.
        self._group_sessions: set[Hashable] = set()
        self._answered: dict[Hashable, float] = {}
        self._waiting: dict[str, deque[_Job]] = {}
        #: Seconds of the thread each account with calls waiting has had, on one clock that
        #: starts where the last call picked started (so a newcomer joins at par).
        self._served: dict[str, float] = {}
        self._floor = 0.0
        self._changed = threading.Condition()
        self._closing = False
        #: The calls under way, outermost first (more than one while calls are paused).
        self._running: list[_Running] = []
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(
        self,
        account: str,
        call: Callable[[], _T],
        *,
        nests: bool = True,
        session: Hashable | None = None,
    ) -> Future[_T]:
        """Run ``call`` in ``account``'s turn; its future holds the result or the error.
        With ``nests`` false it never runs while another call is paused (for calls that
        must see no other call half done). ``session``: the session the call is about, if
        any (a group commit waits briefly for the next call of a session that keeps
        calling).

        :raises RuntimeError: the worker is closing.
        """
        future: Future[_T] = Future()
        self._queue(account, (call, _ThreadReply(future), nests, session))
        return future

    def submit_from_loop(
        self, account: str, call: Callable[[], _T], session: Hashable | None = None
    ) -> asyncio.Future[_T]:
        """:meth:`submit` from the running event loop: the call's outcome is set on an
        asyncio future of that loop (cancelling it before the call starts skips the call).

        :raises RuntimeError: the worker is closing.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._queue(account, (call, _LoopReply(loop, future), True, session))
        return future

    def _queue(self, account: str, job: _Job) -> None:
        with self._changed:
            if self._closing:
                raise RuntimeError("the worker is closing")
            if account not in self._waiting:
                self._waiting[account] = deque()
                self._served[account] = max(self._served.get(account, 0.0), self._floor)
            self._waiting[account].append(job)
            self._changed.notify()

    def close(self) -> None:
        """Run the calls already submitted, then stop the thread."""
        with self._changed:
            self._closing = True
            self._changed.notify()
        self._thread.join()

    def _next(self, *, wait: bool = True) -> tuple[str, _Job] | None:
        """The next call; ``None`` when closing with none left, or none waits and ``wait``
        is false."""
        with self._changed:
            while not self._waiting:
                if self._closing or not wait:
                    return None
                self._changed.wait()
            return self._take(min(self._waiting, key=self._served.__getitem__))

    def _take(self, account: str) -> tuple[str, _Job]:
        queue = self._waiting[account]
        job = queue.popleft()
        self._floor = self._served[account]
        if not queue:
            del self._waiting[account]
            del self._served[account]
        return account, job

    def _owed(self, paused: str, *, idle: bool = False) -> tuple[str, _Job] | None:
        """The next call to run while ``paused``'s call waits: one of another account that
        has had less of the thread (any other, when the thread is ``idle`` otherwise), and
        of none whose call is under way."""
        with self._changed:
            busy = {running.account for running in self._running}
            limit = float("inf") if idle else self._served.get(paused, self._floor)
            owed = [
                account
                for account, queue in self._waiting.items()
                if account not in busy and queue[0][2] and self._served[account] < limit
            ]
            if not owed:
                return None
            return self._take(min(owed, key=self._served.__getitem__))

    def _charge(self, account: str, seconds: float) -> None:
        with self._changed:
            if account in self._served:
                self._served[account] += seconds
            else:
                # It has nothing waiting: what it used counts when it comes back.
                self._served[account] = self._floor + seconds
            # Accounts gone quiet whose use the clock has caught up with count no more.
            busy = {running.account for running in self._running}
            for idle in [a for a, t in self._served.items() if a not in self._waiting]:
                if self._served[idle] <= self._floor and idle not in busy:
                    del self._served[idle]

    def _run(self) -> None:
        _local.worker = self
        while True:
            picked = self._next(wait=not self._held)
            if picked is None:
                if not self._held:
                    return
                if not self._await_group():
                    self._commit()
                continue
            self._execute(*picked)

    def _await_group(self) -> bool:
        """Wait (bounded) for a call of a session that was answered recently and has none in
        the held group, while the group is smaller than :data:`GROUP_TARGET`; whether a call
        is waiting now."""
        if len(self._held) >= GROUP_TARGET:
            return False
        now = time.perf_counter()
        recent = now - RECENT_SESSION_S
        expected = any(
            answered > recent and session not in self._group_sessions
            for session, answered in self._answered.items()
        )
        if not expected:
            return False
        deadline = min(now + GROUP_WAIT_S, self._group_opened + GROUP_SECONDS)
        with self._changed:
            while not self._waiting and not self._closing:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                self._changed.wait(left)
            return bool(self._waiting)

    def _pause(self) -> None:
        if threading.current_thread() is not self._thread or not self._running:
            return
        current = self._running[-1]
        now = time.perf_counter()
        if now - current.since < SLICE_S:
            return
        self._charge(current.account, now - current.since)
        while (owed := self._owed(current.account)) is not None:
            self._execute(*owed)
        if self._held:
            self._commit()
        current.since = time.perf_counter()

    def _serve_until(self, future: Future[Any]) -> None:
        if threading.current_thread() is not self._thread or not self._running:
            return
        current = self._running[-1]
        self._charge(current.account, time.perf_counter() - current.since)

        def wake(_: Future[Any]) -> None:
            with self._changed:
                self._changed.notify_all()

        future.add_done_callback(wake)
        while True:
            owed = None
            with self._changed:
                while not future.done():
                    owed = self._owed(current.account, idle=True)
                    if owed is not None or self._held:
                        break
                    self._changed.wait()
            if owed is not None:
                self._execute(*owed)
            elif self._held:
                self._commit()
            else:
                break
        current.since = time.perf_counter()

    def _execute(self, account: str, job: _Job) -> None:
        call, reply, _, session = job
        if not reply.start():
            return
        running = _Running(account)
        self._running.append(running)
        result: Any = None
        error: BaseException | None = None
        try:
            result = call()
        except BaseException as failure:  # handed to whoever awaits the future
            error = failure
        finally:
            self._running.pop()
        self._charge(account, time.perf_counter() - running.since)
        self._answer(reply, result, error, session)

    def _answer(
        self, reply: _Reply, result: Any, error: BaseException | None, session: Hashable | None
    ) -> None:
        """Answer a call at once, or hold its answer for the commit of the writes pending."""
        if self._held_writes is None or not self._held_writes.writes_pending():
            reply.settle(result, error)
            return
        if not self._held:
            self._group_opened = time.perf_counter()
        self._held.append((reply, result, error))
        if session is not None:
            self._group_sessions.add(session)
        if (
            len(self._held) >= GROUP_CALLS
            or time.perf_counter() - self._group_opened >= GROUP_SECONDS
        ):
            self._commit()

    def _commit(self) -> None:
        """Commit the held writes, then answer the calls that waited for them (each with
        the storage's failure, when the commit failed)."""
        assert self._held_writes is not None
        held, self._held = self._held, []
        sessions, self._group_sessions = self._group_sessions, set()
        try:
            self._held_writes.commit_writes()
        except BaseException as failure:
            held = [(reply, None, failure) for reply, _, _ in held]
        _settle_all(held)
        self._remember(sessions)

    def _remember(self, sessions: set[Hashable]) -> None:
        """Note when ``sessions`` were answered; forget those answered too long ago."""
        now = time.perf_counter()
        if len(self._answered) > 4 * len(sessions) + 64:
            recent = now - RECENT_SESSION_S
            self._answered = {s: t for s, t in self._answered.items() if t > recent}
        for session in sessions:
            self._answered[session] = now


def _settle_all(outcomes: list[_Held]) -> None:
    """Settle each reply with its outcome: those awaited on an event loop in one callback per
    loop (one wake-up of the loop, not one per call)."""
    on_loops: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, Any]]] = {}
    for reply, result, error in outcomes:
        if isinstance(reply, _LoopReply):
            on_loops.setdefault(reply.loop, []).append((reply.future, result, error))
        else:
            reply.settle(result, error)
    for loop, settled in on_loops.items():
        # A closed loop refuses the call: nobody waits for the answers any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle_many_on_loop, settled)


def _settle_many_on_loop(settled: list[tuple[asyncio.Future[Any], Any, Any]]) -> None:
    for future, result, error in settled:
        _settle_on_loop(future, result, error)


class SessionTurns:
    """The calls about each session, one at a time in arrival order, wherever they run (on
    the event loop or a worker): a session's state is never touched by two calls at once.

    A lock is kept only while a call of its session holds it or waits for it."""

    def __init__(self) -> None:
        #: Per session: its lock, and how many calls hold it or wait for it.
        self._locks: dict[Hashable, tuple[asyncio.Lock, list[int]]] = {}

    def turn(self, session: Hashable) -> _Turn:
        """Hold the session's turn while the block runs (``asyncio.Lock`` serves its waiters
        first come, first served)."""
        return _Turn(self._locks, session)

    def __len__(self) -> int:
        """How many sessions have a call under way or waiting."""
        return len(self._locks)


class _Turn:
    """One call's turn in its session (an object, not a generator: one is made per call)."""

    __slots__ = ("_entry", "_locks", "_session")

    def __init__(
        self, locks: dict[Hashable, tuple[asyncio.Lock, list[int]]], session: Hashable
    ) -> None:
        self._locks = locks
        self._session = session

    async def __aenter__(self) -> None:
        entry = self._locks.get(self._session)
        if entry is None:
            entry = self._locks[self._session] = (asyncio.Lock(), [0])
        self._entry = entry
        entry[1][0] += 1
        try:
            await entry[0].acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *_: object) -> None:
        self._entry[0].release()
        self._leave()

    def _leave(self) -> None:
        users = self._entry[1]
        users[0] -= 1
        if not users[0]:
            del self._locks[self._session]
