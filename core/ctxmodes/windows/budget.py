"""The token budget of a context window: what ``get_context_remaining`` reports, and when the
model gets its one reminder and its forced fallback.

The usable window is the model's context window minus a fixed reserve of 16,384 tokens (room
for the final checkpoint and Pi's own compaction reserve). A window gets at most one reminder,
once 6,144 or fewer usable tokens remain, and at most one fallback, once none remain. Both are
persisted as markers, and :class:`BudgetTracker` reads them back, so a resumed session does
not repeat them.
"""

from __future__ import annotations

import math

from pydantic import Field

from ctxmodes.windows._wire import WireModel
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import (
    ContextManagementDetails,
    WindowMarker,
    fallback_marker,
    reminder_marker,
)

#: Tokens kept back from the model's context window.
CONTEXT_WINDOW_FALLBACK_BUFFER = 16_384
#: Remaining usable tokens at or below which the window's reminder is sent.
CONTEXT_WINDOW_REMINDER_THRESHOLD = 6_144


def usable_context_window(context_window: int | None) -> int:
    """The part of ``context_window`` the conversation may fill (0 when unknown)."""
    return max(0, (context_window or 0) - CONTEXT_WINDOW_FALLBACK_BUFFER)


def remaining_tokens(context_window: int | None, used_tokens: float | None) -> int | None:
    """Usable tokens left after ``used_tokens`` (whole tokens; ``None`` when the usage is
    unknown). ``used_tokens`` is the context size of the latest request, e.g.
    :func:`ctxmodes.compaction.tokens.calculate_context_tokens` of the last usage."""
    if used_tokens is None:
        return None
    return max(0, math.floor(usable_context_window(context_window) - used_tokens))


class ContextRemaining(WireModel):
    """The ``details`` of a ``get_context_remaining`` result."""

    remaining_tokens: int | None = Field(default=None, alias="remainingTokens")
    window_id: str | None = Field(default=None, alias="windowId")
    #: The usable window (context window minus the reserve), not the model's full window.
    context_window: int = Field(alias="contextWindow")

    def text(self) -> str:
        """The tool result text the model reads."""
        amount = "unknown" if self.remaining_tokens is None else str(self.remaining_tokens)
        return f"You have {amount} tokens left in this context window."


def context_remaining(
    context_window: int | None, used_tokens: float | None, window_id: str | None
) -> ContextRemaining:
    """The ``get_context_remaining`` answer for a window of ``context_window`` tokens.

    :param used_tokens: the context tokens of the latest request (``None`` when unknown).
    :param window_id: the current window's id, when a window exists.
    """
    return ContextRemaining(
        remaining_tokens=remaining_tokens(context_window, used_tokens),
        window_id=window_id,
        context_window=usable_context_window(context_window),
    )


class BudgetTracker:
    """Which windows already got their reminder or fallback.

    Fed the persisted markers (``observe_marker``) and asked after every completed assistant
    message (``check``). A window that got its fallback counts as reminded too, so a later
    measurement in the same window never produces a reminder after the fallback.
    """

    __slots__ = ("_exhausted", "_reminded")

    def __init__(self) -> None:
        self._reminded: set[str] = set()
        self._exhausted: set[str] = set()

    def observe_marker(self, details: ContextManagementDetails) -> None:
        """Remember a persisted reminder or fallback."""
        if details.kind == "reminder":
            self._reminded.add(details.current_window_id)
        elif details.kind == "fallback":
            self._exhausted.add(details.current_window_id)
            self._reminded.add(details.current_window_id)

    def was_reminded(self, window_id: str) -> bool:
        return window_id in self._reminded

    def was_exhausted(self, window_id: str) -> bool:
        return window_id in self._exhausted

    def check(self, identity: WindowIdentity | None, remaining: int | None) -> WindowMarker | None:
        """The marker the window is due, if any, recorded as sent.

        :param identity: the current window (no window, no marker).
        :param remaining: usable tokens left (``None`` when unknown: no marker).
        :return: a fallback marker (append it and start a turn), a reminder marker (append it
            without a turn), or ``None``.
        """
        if identity is None or remaining is None:
            return None
        window_id = identity.current_window_id
        if remaining <= 0:
            if window_id in self._exhausted:
                return None
            self._exhausted.add(window_id)
            self._reminded.add(window_id)
            return fallback_marker(identity)
        if remaining <= CONTEXT_WINDOW_REMINDER_THRESHOLD and window_id not in self._reminded:
            self._reminded.add(window_id)
            return reminder_marker(identity, remaining)
        return None
