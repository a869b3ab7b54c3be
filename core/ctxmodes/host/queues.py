"""Messages waiting to enter a run: steering, follow-ups and next-turn messages.

* **Steering** messages are delivered at the start of a run and after each turn's tool
  calls, before the next model request.
* **Follow-up** messages are delivered only when the run would otherwise stop.
* **Next-turn** messages ride along with the next prompt and never start anything.

Queues are filled from any thread (a UI, a tool, a hook) and drained by the run loop.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Literal

from ctxmodes.session.models import CustomMessage, TextContent, UserMessage

QueuedMessage = UserMessage | CustomMessage
DrainMode = Literal["one-at-a-time", "all"]


def queued_text(message: QueuedMessage) -> str:
    """The text a queue shows for ``message`` (its text blocks, joined)."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(block.text for block in content if isinstance(block, TextContent))


class MessageQueue:
    """A thread-safe FIFO drained one message at a time or all at once.

    A queue ``shown_until_started`` lists a message it gave the run among its
    :meth:`texts` until the run starts it (:meth:`started`), as Pi's queues do.
    """

    def __init__(
        self, mode: DrainMode = "one-at-a-time", *, shown_until_started: bool = False
    ) -> None:
        self._lock = threading.Lock()
        self._items: deque[QueuedMessage] = deque()
        self._taken: list[QueuedMessage] | None = [] if shown_until_started else None
        self.mode: DrainMode = mode

    def push(self, message: QueuedMessage) -> None:
        with self._lock:
            self._items.append(message)

    def drain(self) -> list[QueuedMessage]:
        """Remove and return what the run takes now (the first message, or all of them)."""
        with self._lock:
            if not self._items:
                return []
            if self.mode == "all":
                items = list(self._items)
                self._items.clear()
            else:
                items = [self._items.popleft()]
            if self._taken is not None:
                self._taken.extend(items)
            return items

    def started(self, message: object) -> bool:
        """``message`` starts: no longer shown. True when it was one this queue gave."""
        with self._lock:
            shown = self._taken or []
            for at, taken in enumerate(shown):
                if taken is message:
                    del shown[at]
                    return True
            return False

    def forget_taken(self) -> None:
        """Stop showing what was taken and never started (the run ended before it)."""
        with self._lock:
            if self._taken:
                self._taken.clear()

    def clear(self) -> list[QueuedMessage]:
        """Remove and return everything."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
            return items

    def take_user_messages(self) -> list[UserMessage]:
        """Remove and return the user's messages; plugins' stay, in their order."""
        with self._lock:
            taken = [item for item in self._items if isinstance(item, UserMessage)]
            if taken:
                self._items = deque(
                    item for item in self._items if not isinstance(item, UserMessage)
                )
            return taken

    def messages(self) -> tuple[QueuedMessage, ...]:
        """What waits, oldest first (left queued)."""
        with self._lock:
            return tuple(self._items)

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)

    def texts(self) -> tuple[str, ...]:
        """What the queue shows: the messages taken and not yet started, then those
        waiting."""
        with self._lock:
            return tuple(queued_text(message) for message in (*(self._taken or ()), *self._items))


class RunQueues:
    """The three queues of one session."""

    def __init__(self) -> None:
        self.steering = MessageQueue(shown_until_started=True)
        self.follow_up = MessageQueue(shown_until_started=True)
        self.next_turn = MessageQueue(mode="all")

    def has_pending(self) -> bool:
        """True when steering or follow-up messages wait (next-turn ones never start a run)."""
        return bool(self.steering) or bool(self.follow_up)

    def clear(self) -> tuple[list[QueuedMessage], list[QueuedMessage]]:
        """Empty the steering and follow-up queues; return what they held."""
        return self.steering.clear(), self.follow_up.clear()

    def started(self, message: object) -> bool:
        """``message`` starts (see :meth:`MessageQueue.started`); True when it came from
        the steering or follow-up queue."""
        return self.steering.started(message) or self.follow_up.started(message)

    def forget_taken(self) -> None:
        self.steering.forget_taken()
        self.follow_up.forget_taken()
