"""The tokens and cost a session has spent, summed as Pi's footer sums them.

Internal to ctxmodes: not part of the API; it may change in any release.

Every entry of the session file counts, on every branch: each reply (a failed or stopped one
too), a tool result that reports usage, and the summaries of compactions and of branches
left with ``/tree``. The totals are kept as the session grows: a refresh reads only the
entries appended since the last one, so a turn never costs a pass over the whole session.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ctxmodes.host.session_stats import TokenTotals, billed_usage
from ctxmodes.session.jsvalues import js_round, js_to_fixed
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import AssistantMessage, MessageEntry, SessionEntry


def pi_tokens(count: int) -> str:
    """A token count as Pi's footer writes it: ``910``, ``1.2k``, ``45k``, ``1.3M``, ``12M``."""
    if count < 1_000:
        return str(count)
    if count < 10_000:
        return f"{js_to_fixed(count / 1_000, 1)}k"
    if count < 1_000_000:
        return f"{js_round(count / 1_000)}k"
    if count < 10_000_000:
        return f"{js_to_fixed(count / 1_000_000, 1)}M"
    return f"{js_round(count / 1_000_000)}M"


@dataclass(slots=True)
class UsageTotals:
    """The tokens and cost of the entries added so far, and the last reply's cache hits."""

    tokens: TokenTotals = field(default_factory=TokenTotals)
    #: The share of the last reply's prompt read from the cache (percent); ``None`` when
    #: that reply had no prompt tokens.
    cache_hit_rate: float | None = None

    @property
    def cost(self) -> float:
        return float(self.tokens.cost)

    def add(self, entries: Iterable[SessionEntry]) -> None:
        for entry in entries:
            usage = billed_usage(entry)
            if usage is None:
                continue
            self.tokens = self.tokens.plus(usage)
            if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                prompt = usage.input + usage.cache_read + usage.cache_write
                self.cache_hit_rate = 100 * usage.cache_read / prompt if prompt > 0 else None

    def stats(self) -> str:
        """Pi's token figures: ``↑`` sent, ``↓`` received, ``R`` read from and ``W`` written
        to the cache, ``CH`` the last reply's cache hits; each only once it is not zero."""
        tokens = self.tokens
        parts = [
            f"{mark}{pi_tokens(int(count))}"
            for mark, count in (
                ("↑", tokens.input),
                ("↓", tokens.output),
                ("R", tokens.cache_read),
                ("W", tokens.cache_write),
            )
            if count
        ]
        if (tokens.cache_read or tokens.cache_write) and self.cache_hit_rate is not None:
            parts.append(f"CH{js_to_fixed(self.cache_hit_rate, 1)}%")
        return " ".join(parts)


class SessionUsage:
    """The :class:`UsageTotals` of one session, brought up to date by :meth:`update`."""

    def __init__(self) -> None:
        self.totals = UsageTotals()
        self._manager: SessionManager | None = None
        self._counted = 0

    def update(self, manager: SessionManager) -> UsageTotals:
        """The totals with the entries appended since the last update; those of ``manager``
        from its first entry when it is not the session counted until now."""
        if manager is not self._manager:
            self._manager, self._counted, self.totals = manager, 0, UsageTotals()
        count = manager.entry_count()
        if count > self._counted:
            self.totals.add(manager.get_entries()[self._counted : count])
            self._counted = count
        return self.totals
