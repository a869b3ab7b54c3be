"""Where a session's tokens and money went, as Pi's ``/session`` reports it: the cost per
model that answered (Pi's ``getUsageCostBreakdown``) and the prompt tokens billed again
because the provider's cache missed them (Pi's ``computeCacheWaste``).

A cache miss is counted on a reply whose prompt should have been read from the cache: the
part of it the previous request already sent, less what the cache did serve, when that is
more than :data:`NOISE_FLOOR_TOKENS`. A compaction or branch summary starts over (the
context changed on purpose); a change of model does not (its first prompt is billed in
full, and that is what the count is for). Its cost is those tokens at the rate the reply
paid for its uncached input, less the cache-read rate. :class:`CacheScan` takes the entries
one at a time, so that the terminal's notices of each miss scan a growing session once.

Internal to ctxmodes: not part of the API and may change without notice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from ctxmodes.compaction.tokens import Number
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    CompactionEntry,
    MessageEntry,
    SessionEntry,
    ToolResultMessage,
    Usage,
)

#: Misses this small are the cache's breakpoints, not a miss.
NOISE_FLOOR_TOKENS: Final = 1024
#: What Pi files the usage of tool results and summaries under.
SUMMARIES_KEY: Final = "Tools/summaries"

#: The cache-read price of ``provider``'s model ``model_id``, dollars per million tokens
#: (``None``: not a known model).
CacheReadPrice = Callable[[str, str], float | None]


def cache_read_prices(models: Iterable[ModelSpec]) -> CacheReadPrice:
    """The cache-read price of each of ``models``, looked up by provider and id."""
    prices = {(model.provider, model.id): model.cost.cache_read for model in models}
    return lambda provider, model_id: prices.get((provider, model_id))


@dataclass(frozen=True, slots=True)
class UsageShare:
    """What one model (``provider/model``), or the tools and summaries, cost."""

    key: str
    cost: Number
    tokens: Number


def usage_breakdown(entries: Iterable[SessionEntry]) -> list[UsageShare]:
    """The cost and tokens of each model that answered, and of tool results and summaries
    that report a usage, dearest first; those with neither left out."""
    totals: dict[str, tuple[Number, Number]] = {}
    for entry in entries:
        found = _keyed_usage(entry)
        if found is None:
            continue
        key, usage = found
        cost, tokens = totals.get(key, (0, 0))
        spent = usage.input + usage.output + usage.cache_read + usage.cache_write
        totals[key] = (cost + usage.cost.total, tokens + spent)
    shares = [UsageShare(key, cost, tokens) for key, (cost, tokens) in totals.items()]
    # A stable sort: models that cost the same stay in the order they first answered.
    return sorted((s for s in shares if s.cost > 0 or s.tokens > 0), key=lambda s: -s.cost)


def _keyed_usage(entry: SessionEntry) -> tuple[str, Usage] | None:
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, AssistantMessage):
            return f"{message.provider}/{message.response_model or message.model}", message.usage
        if isinstance(message, ToolResultMessage) and message.usage is not None:
            return SUMMARIES_KEY, message.usage
        return None
    if isinstance(entry, CompactionEntry | BranchSummaryEntry) and entry.usage is not None:
        return SUMMARIES_KEY, entry.usage
    return None


@dataclass(frozen=True, slots=True)
class CacheWaste:
    """Prompt tokens billed again over a session, what that cost, and how many replies
    paid for it."""

    missed_tokens: Number = 0
    missed_cost: float = 0.0
    miss_count: int = 0


@dataclass(frozen=True, slots=True)
class CacheMiss:
    """One reply's miss: the tokens billed again and their cost; how long the session was
    idle before it (milliseconds) and whether another model answered the request before."""

    missed_tokens: Number
    missed_cost: float
    idle_ms: Number
    model_changed: bool


@dataclass(frozen=True, slots=True)
class _Previous:
    prompt_tokens: Number
    model: str
    timestamp: Number
    #: Whether any reply so far reported cache reads or writes.
    reported_cache: bool


class CacheScan:
    """The cache misses of a session's entries, taken one at a time in file order (so a
    session that grows is scanned once, not again for each reply)."""

    def __init__(self, cache_read_price: CacheReadPrice) -> None:
        self._price = cache_read_price
        self._previous: _Previous | None = None
        self.waste = CacheWaste()

    def take(self, entry: SessionEntry) -> CacheMiss | None:
        """Count ``entry``; the miss of the reply it holds, if that reply missed."""
        if isinstance(entry, CompactionEntry | BranchSummaryEntry):
            self._previous = None
            return None
        if not isinstance(entry, MessageEntry) or not isinstance(entry.message, AssistantMessage):
            return None
        message = entry.message
        previous = self._previous
        miss = _missed(previous, message, self._price)
        if miss is not None:
            waste = self.waste
            self.waste = CacheWaste(
                waste.missed_tokens + miss.missed_tokens,
                waste.missed_cost + miss.missed_cost,
                waste.miss_count + 1,
            )
        usage = message.usage
        prompt = usage.input + usage.cache_read + usage.cache_write
        if prompt > 0:
            reported = usage.cache_read + usage.cache_write > 0
            self._previous = _Previous(
                prompt,
                _model_key(message),
                message.timestamp,
                reported or (previous is not None and previous.reported_cache),
            )
        return miss


def cache_waste(entries: Iterable[SessionEntry], cache_read_price: CacheReadPrice) -> CacheWaste:
    """The cache misses of the replies among ``entries``, in file order, summed."""
    scan = CacheScan(cache_read_price)
    for entry in entries:
        scan.take(entry)
    return scan.waste


def _model_key(message: AssistantMessage) -> str:
    return f"{message.provider}/{message.model}"


def _missed(
    previous: _Previous | None, message: AssistantMessage, cache_read_price: CacheReadPrice
) -> CacheMiss | None:
    usage = message.usage
    prompt = usage.input + usage.cache_read + usage.cache_write
    cached = usage.cache_read + usage.cache_write
    # A reply that used no cache is a miss only where the provider reported caching before:
    # one that never does has nothing to miss.
    if previous is None or prompt <= 0 or (cached == 0 and not previous.reported_cache):
        return None
    missed = min(previous.prompt_tokens, prompt) - usage.cache_read
    if missed <= NOISE_FLOOR_TOKENS:
        return None
    paid = usage.input + usage.cache_write
    paid_rate = (usage.cost.input + usage.cost.cache_write) / paid if paid > 0 else 0.0
    if usage.cache_read > 0:
        read_rate = usage.cost.cache_read / usage.cache_read
    else:
        read_rate = (cache_read_price(message.provider, message.model) or 0.0) / 1_000_000
    return CacheMiss(
        missed,
        missed * max(0.0, paid_rate - read_rate),
        max(0, message.timestamp - previous.timestamp),
        _model_key(message) != previous.model,
    )
