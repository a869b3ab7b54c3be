"""The upstream model's stream of one ``/responses`` call, carried from its thread to the event
loop.

A provider streams by blocking (its transport waits on the model's socket), so the call runs
on a stream thread: the thread builds the model's request, makes the call through the
provider's :meth:`~ctxmodes.providers.Provider.deliver` (on that same thread, for a model over
HTTP) and hands each event to the loop as it comes, in order. What keeps the first token's
path short:

- The loop learns that the request is built (or why it could not be) before it starts the
  turn's other work, such as writing the turn's input: the model is called first, and that
  work runs while the model prepares its answer.
- Each event reaches the loop in one callback that wakes the waiting handler itself (no
  queue, and no task per wait to bound the upstream's silence).
- Having handed over its first event, the stream thread waits until the loop has forwarded
  it. Otherwise the thread goes on making its next events while holding the interpreter,
  and the loop, woken to forward the first, waits for it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future

from ctxmodes import AbortController, CtxmodesError
from ctxmodes.providers import ModelRequest, Provider, StreamEvent
from ctxmodes_remote.service.bridge import failure_event

_log = logging.getLogger("ctxmodes.serve")

#: What the stream thread hands over: an event, the exception that ended the stream, or
#: ``None`` once the stream is over.
_Item = StreamEvent | BaseException | None


class UpstreamStream:
    """One upstream call: :meth:`run` on a stream thread, the rest on the event loop.

    :param idle_timeout_s: how long the upstream may stay silent (before its first event or
        between two) before the stream ends with a failure event and the call is aborted.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        provider: Provider,
        controller: AbortController,
        idle_timeout_s: float,
    ) -> None:
        self._loop = loop
        self._provider = provider
        self._controller = controller
        self._idle_timeout_s = idle_timeout_s
        self._built: Future[None] = Future()
        self._items: deque[_Item] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._first_forwarded = threading.Event()
        # A response that ends (or whose client leaves) never leaves the thread waiting.
        controller.signal.add_callback(self._first_forwarded.set)

    # -- the stream thread ---------------------------------------------------------------------

    def run(self, build: Callable[[], ModelRequest]) -> None:
        """Build the model's request with ``build``, then stream the provider's answer to the
        loop; an exception raised by ``build`` is raised by :meth:`built` instead."""
        try:
            request = build()
        except BaseException as error:  # the handler answers it
            self._built.set_exception(error)
            return
        self._built.set_result(None)
        try:
            self._provider.deliver(request, self._controller.signal, self._hand_event)
        except BaseException as error:  # handed to the loop, which reports it
            self._hand(error)
        finally:
            self._hand(None)

    def _hand_event(self, event: StreamEvent) -> None:
        self._hand(event)
        if not self._first_forwarded.is_set():
            self._first_forwarded.wait()

    def _hand(self, item: _Item) -> None:
        self._loop.call_soon_threadsafe(self._arrive, item)

    # -- the event loop ------------------------------------------------------------------------

    async def built(self) -> None:
        """Once the model's request is built and the provider called.

        :raises CiphertextError: the input holds a value that is not the account's.
        """
        await asyncio.wrap_future(self._built)

    def forwarded(self) -> None:
        """The event last taken from :meth:`events` has reached the client."""
        self._first_forwarded.set()

    async def events(self) -> AsyncIterator[StreamEvent]:
        """The provider's events in order. A provider's failure becomes a failure event (its
        own one-line message, or a generic one); an upstream silent for longer than the idle
        timeout ends the stream with a failure event and is aborted (its thread returns to
        the pool once the provider sees it)."""
        while True:
            try:
                item = await self._next()
            except TimeoutError:
                silence = f"{self._idle_timeout_s:g} s"
                self._controller.abort(f"upstream model silent for {silence}")
                _log.error("upstream model timed out: nothing for %s", silence)
                yield failure_event(
                    self._provider.info, f"upstream model timed out: nothing for {silence}"
                )
                return
            if item is None:
                return
            if isinstance(item, BaseException):
                # A provider's own errors are one-line and safe to show; anything else is
                # logged here and reported generically.
                _log.error("upstream model failed: %s", item)
                shown = str(item) if isinstance(item, CtxmodesError) else "upstream model failed"
                yield failure_event(self._provider.info, shown)
                continue
            yield item

    def _arrive(self, item: _Item) -> None:
        self._items.append(item)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _next(self) -> _Item:
        if not self._items:
            waiter = self._loop.create_future()
            self._waiter = waiter
            try:
                async with asyncio.timeout(self._idle_timeout_s):
                    await waiter
            finally:
                self._waiter = None
        return self._items.popleft()
