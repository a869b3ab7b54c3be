"""What a session's prompt-cache misses and summaries were billed, in Pi's words, when the
user asked for it (``terminal.cache_miss_notices``, Pi's ``showCacheMissNotices``).

After a reply whose prompt the provider's cache missed (see
:mod:`ctxmodes.host.usage_breakdown`) for at least :data:`NOTICE_TOKENS` tokens or
:data:`NOTICE_DOLLARS`: ``Cache miss: 25k tokens re-billed (~$0.07)``, or ``… after model
switch`` or ``… after 7m idle`` when that is the likely cause. After a compaction or a
branch summary that reports its usage: ``Compaction: 12k tokens billed (~$0.04)``. Shown
live and again when the branch is replayed.

The session's entries are scanned once, as they are appended: a reply costs a look at the
entries added since the last one, not a pass over the session.

Internal to ctxmodes: not part of the API; it may change in any release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ctxmodes.host.usage_breakdown import CacheMiss, CacheScan, cache_read_prices
from ctxmodes.session.jsvalues import js_round, js_to_fixed
from ctxmodes.session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    MessageEntry,
    SessionEntry,
    Usage,
)
from ctxmodes.tui.usage_totals import pi_tokens

if TYPE_CHECKING:
    from ctxmodes.sdk import Agent
    from ctxmodes.session.manager import SessionManager

#: A miss smaller than both of these is not worth a line.
NOTICE_TOKENS: Final = 20_000
NOTICE_DOLLARS: Final = 0.1
#: An idle gap this long (the usual cache lifetime) is named as the likely cause.
CACHE_LIFETIME_MS: Final = 5 * 60 * 1000


def _about(dollars: float) -> str:
    return f" (~${js_to_fixed(dollars, 2)})" if dollars >= 0.01 else ""


def miss_notice(miss: CacheMiss) -> str | None:
    """The line for ``miss`` (``None``: too small to say)."""
    if miss.missed_tokens < NOTICE_TOKENS and miss.missed_cost < NOTICE_DOLLARS:
        return None
    label = "Cache miss"
    if miss.model_changed:
        label = "Cache miss after model switch"
    elif miss.idle_ms >= CACHE_LIFETIME_MS:
        label = f"Cache miss after {js_round(miss.idle_ms / 60_000)}m idle"
    tokens = pi_tokens(int(miss.missed_tokens))
    return f"{label}: {tokens} tokens re-billed{_about(miss.missed_cost)}"


def bill_notice(label: str, usage: Usage) -> str:
    """The line for a summary's usage: ``Compaction: 12k tokens billed (~$0.04)``."""
    tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    return f"{label}: {pi_tokens(int(tokens))} tokens billed{_about(float(usage.cost.total))}"


class CacheNotices:
    """The notices of the agent's current session, kept up to date as it grows."""

    def __init__(self, agent: Agent, *, enabled: bool = False) -> None:
        self._agent = agent
        self.enabled = enabled
        self._manager: SessionManager | None = None
        self._scanned = 0
        self._scan: CacheScan | None = None
        #: The line each entry is followed by, by entry id.
        self._notices: dict[str, str] = {}

    def _update(self) -> None:
        manager = self._agent.session_manager
        if manager is not self._manager or self._scan is None:
            self._manager, self._scanned = manager, 0
            self._scan = CacheScan(cache_read_prices(self._agent.models()))
            self._notices = {}
        count = manager.entry_count()
        if count > self._scanned:
            for entry in manager.get_entries()[self._scanned : count]:
                self._take(entry, self._scan)
            self._scanned = count

    def _take(self, entry: SessionEntry, scan: CacheScan) -> None:
        miss = scan.take(entry)
        notice: str | None = None
        if miss is not None and isinstance(entry, MessageEntry):
            message = entry.message
            answered = isinstance(message, AssistantMessage) and message.stop_reason not in (
                "aborted",
                "error",
            )
            notice = miss_notice(miss) if answered else None
        elif isinstance(entry, CompactionEntry) and entry.usage is not None:
            notice = bill_notice("Compaction", entry.usage)
        elif isinstance(entry, BranchSummaryEntry) and entry.usage is not None:
            notice = bill_notice("Branch summary", entry.usage)
        if notice is not None:
            self._notices[entry.id] = notice

    def notice(self, entry_id: str | None) -> str | None:
        """The line that follows the entry ``entry_id``, if any (none while turned off)."""
        if not self.enabled or entry_id is None:
            return None
        self._update()
        return self._notices.get(entry_id)
