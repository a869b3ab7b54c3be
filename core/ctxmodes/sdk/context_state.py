"""What the footer shows about the context: window number and usable tokens left.

The figure comes from the last usage the model reported on the active branch. After a
rollover (a window marker) or a compaction that came later, the old figure describes a
context the model no longer sees, so the state says *unknown* until the next report, as Pi
shows ``?`` after a compaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxmodes.compaction.tokens import calculate_context_tokens
from ctxmodes.sdk.events import window_number
from ctxmodes.session.models import AgentMessage, AssistantMessage, CompactionSummaryMessage
from ctxmodes.windows.budget import usable_context_window


@dataclass(frozen=True, slots=True)
class ContextState:
    """:ivar window: the current window number (``None`` when no marker is on the branch).
    :ivar used_tokens: the last reported context size, ``None`` while unknown.
    :ivar usable_tokens: the model's context window minus the reserve
        (:func:`~ctxmodes.windows.budget.reserve_tokens`).
    """

    window: int | None
    used_tokens: int | None
    usable_tokens: int

    @property
    def tokens_left(self) -> int | None:
        if self.used_tokens is None:
            return None
        return max(0, self.usable_tokens - self.used_tokens)

    @property
    def fraction_used(self) -> float | None:
        if self.used_tokens is None or self.usable_tokens <= 0:
            return None
        return min(1.0, self.used_tokens / self.usable_tokens)


def context_state(messages: Sequence[AgentMessage], context_window: int | None) -> ContextState:
    """The state for the context ``messages`` (newest last); O(messages since the last
    usage report or marker), not O(session)."""
    used: int | None = None
    window: int | None = None
    usage_seen = reset_seen = False
    for message in reversed(messages):
        number = window_number(message)
        if number is not None and window is None:
            window = number
        if not usage_seen and not reset_seen:
            if number is not None or isinstance(message, CompactionSummaryMessage):
                reset_seen = True
            elif isinstance(message, AssistantMessage) and message.stop_reason not in (
                "error",
                "aborted",
            ):
                usage_seen = True
                used = int(calculate_context_tokens(message.usage))
        if window is not None and (usage_seen or reset_seen):
            break
    return ContextState(window, used, usable_context_window(context_window))
