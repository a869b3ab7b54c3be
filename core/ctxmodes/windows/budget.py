"""The token budget of a context window: what ``get_context_remaining`` reports, and when the
model gets its one reminder and its forced fallback.

The usable window is the model's context window minus a reserve (room for the final
checkpoint). A window gets at most one reminder, once few usable tokens remain, and at most
one fallback, once none remain. Both are persisted as markers, and :class:`BudgetTracker`
reads them back, so a resumed session does not repeat them.

The reserve and the reminder threshold are Codex's — 16,384 and 6,144 tokens — wherever they
leave room to work, and scale down for small (local) models: the reserve is a quarter of the
context window and the threshold a quarter of the usable window, each capped at Codex's
figure. Codex's figures hold from a 65,536-token window (reserve) and a 32,768-token window
(threshold) up; an 8,192-token model keeps 2,048 tokens back, works in 6,144 and is reminded
with 1,536 left. Below :data:`SMALL_WINDOW` a managed mode still works, with frequent
rollovers, and the user is warned once.
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

#: Tokens kept back from a large context window (Codex's figure; smaller for small windows).
CONTEXT_WINDOW_FALLBACK_BUFFER = 16_384
#: Remaining usable tokens at or below which a large window's reminder is sent (Codex's).
CONTEXT_WINDOW_REMINDER_THRESHOLD = 6_144
#: Context windows below this leave a managed mode too little room to work comfortably.
SMALL_WINDOW = 16_384


def reserve_tokens(context_window: int | None) -> int:
    """Tokens kept back from ``context_window``: a quarter of it, at most 16,384."""
    return min(CONTEXT_WINDOW_FALLBACK_BUFFER, max(0, context_window or 0) // 4)


def usable_context_window(context_window: int | None) -> int:
    """The part of ``context_window`` the conversation may fill (0 when unknown)."""
    return max(0, (context_window or 0) - reserve_tokens(context_window))


def reminder_threshold(context_window: int | None) -> int:
    """Usable tokens left at which the reminder is due: a quarter of the usable window, at
    most 6,144."""
    return min(CONTEXT_WINDOW_REMINDER_THRESHOLD, usable_context_window(context_window) // 4)


def small_window_warning(context_window: int | None, mode: str) -> str | None:
    """What to tell the user once when ``context_window`` is small for a managed mode."""
    if context_window is None or context_window >= SMALL_WINDOW:
        return None
    return (
        f"The model's context window ({context_window:,} tokens) is small for the {mode} mode: "
        f"it works in {usable_context_window(context_window):,} of them and will start new "
        f"windows often. A window of {SMALL_WINDOW:,} tokens or more is recommended."
    )


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

    def check(
        self,
        identity: WindowIdentity | None,
        remaining: int | None,
        threshold: int = CONTEXT_WINDOW_REMINDER_THRESHOLD,
    ) -> WindowMarker | None:
        """The marker the window is due, if any, recorded as sent.

        :param identity: the current window (no window, no marker).
        :param remaining: usable tokens left (``None`` when unknown: no marker).
        :param threshold: the reminder threshold (:func:`reminder_threshold` of the window).
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
        if remaining <= threshold and window_id not in self._reminded:
            self._reminded.add(window_id)
            return reminder_marker(identity, remaining)
        return None
