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
    """A thread-safe FIFO drained one message at a time or all at once."""

    def __init__(self, mode: DrainMode = "one-at-a-time") -> None:
        self._lock = threading.Lock()
        self._items: deque[QueuedMessage] = deque()
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
                return items
            return [self._items.popleft()]

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
        with self._lock:
            return tuple(queued_text(message) for message in self._items)


class RunQueues:
    """The three queues of one session."""

    def __init__(self) -> None:
        self.steering = MessageQueue()
        self.follow_up = MessageQueue()
        self.next_turn = MessageQueue(mode="all")

    def has_pending(self) -> bool:
        """True when steering or follow-up messages wait (next-turn ones never start a run)."""
        return bool(self.steering) or bool(self.follow_up)

    def clear(self) -> tuple[list[QueuedMessage], list[QueuedMessage]]:
        """Empty the steering and follow-up queues; return what they held."""
        return self.steering.clear(), self.follow_up.clear()
