"""The context messages of a running session: a stored prefix read on demand, plus a tail.

A session's context can be the whole of a long session (a million messages when it was never
compacted). Holding that as a list of models would cost gigabytes, and copying it for every
request would make each turn O(session). :class:`MessageList` is a list whose first part is
the context as the store has it (:attr:`SessionContext.messages
<ctxmodes.session.context.SessionContext.messages>`, decoded only where it is read) and whose
rest is the messages the run appended since.

:meth:`MessageList.snapshot` is O(1): a snapshot shares the stored part and the tail, each
list seeing only its own length of them. Appending to the tail in place is safe for whichever
list is at its end; any other list copies the tail first. Every other change (setting,
deleting or inserting anywhere but at the end) turns the list into a plain list of its own,
so a plugin may still treat a context as a list, and pays for it only when it edits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence, Sequence
from itertools import islice
from typing import overload

from ctxmodes.session.models import AgentMessage

__all__ = ["MessageList"]


class MessageList(MutableSequence[AgentMessage]):
    """A list of context messages over a stored prefix (see the module docstring)."""

    __slots__ = ("_owned", "_stored", "_stored_length", "_tail", "_tail_length")

    def __init__(
        self, stored: Sequence[AgentMessage] = (), tail: Iterable[AgentMessage] = ()
    ) -> None:
        self._stored = stored
        self._stored_length = len(stored)
        self._tail = list(tail)
        self._tail_length = len(self._tail)
        #: Whether no other list shares ``_tail`` (it may then be edited in place).
        self._owned = True

    def snapshot(self) -> MessageList:
        """This list as it is now, unaffected by later changes to either (O(1))."""
        copy = MessageList.__new__(MessageList)
        copy._stored = self._stored
        copy._stored_length = self._stored_length
        copy._tail = self._tail
        copy._tail_length = self._tail_length
        copy._owned = self._owned = False
        return copy

    # -- reading ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._stored_length + self._tail_length

    @overload
    def __getitem__(self, index: int) -> AgentMessage: ...
    @overload
    def __getitem__(self, index: slice) -> list[AgentMessage]: ...
    def __getitem__(self, index: int | slice) -> AgentMessage | list[AgentMessage]:
        if isinstance(index, slice):
            return [self._at(position) for position in range(len(self))[index]]
        return self._at(range(len(self))[index])

    def _at(self, position: int) -> AgentMessage:
        if position < self._stored_length:
            return self._stored[position]
        return self._tail[position - self._stored_length]

    def __iter__(self) -> Iterator[AgentMessage]:
        # The stored part's own iterator reads the session a block at a time.
        yield from islice(self._stored, self._stored_length)
        yield from islice(self._tail, self._tail_length)

    def __reversed__(self) -> Iterator[AgentMessage]:
        for position in range(len(self) - 1, -1, -1):
            yield self._at(position)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MessageList({len(self)} messages, {self._tail_length} appended)"

    # -- changing ------------------------------------------------------------------------

    def append(self, value: AgentMessage) -> None:
        if len(self._tail) != self._tail_length:
            # Another list sharing the tail has appended past this one's end.
            self._tail = self._tail[: self._tail_length]
        self._tail.append(value)
        self._tail_length += 1

    def pop(self, index: int = -1) -> AgentMessage:
        if index not in (-1, len(self) - 1):
            return super().pop(index)
        value = self[-1]
        if self._tail_length:
            if self._owned and len(self._tail) == self._tail_length:
                self._tail.pop()
            # Otherwise shortening the view leaves shared storage alone, and the next append
            # copies the tail.
            self._tail_length -= 1
        else:
            self._stored_length -= 1
        return value

    def _own(self) -> list[AgentMessage]:
        """Become a plain list of this list's own (before an edit other than at the end)."""
        if not self._owned or self._stored_length or len(self._tail) != self._tail_length:
            self._tail = list(self)
            self._tail_length = len(self._tail)
            self._stored = ()
            self._stored_length = 0
            self._owned = True
        return self._tail

    @overload
    def __setitem__(self, index: int, value: AgentMessage) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[AgentMessage]) -> None: ...
    def __setitem__(self, index: int | slice, value: AgentMessage | Iterable[AgentMessage]) -> None:
        owned = self._own()
        owned[index] = value  # type: ignore[index,assignment]
        self._tail_length = len(owned)

    def __delitem__(self, index: int | slice) -> None:
        owned = self._own()
        del owned[index]
        self._tail_length = len(owned)

    def insert(self, index: int, value: AgentMessage) -> None:
        owned = self._own()
        owned.insert(index, value)
        self._tail_length = len(owned)
