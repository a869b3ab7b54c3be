"""The text of ``/session``: Pi's report, in its words and order (name, file, id; the
messages; the tokens, the cached ones apart; the cost, per model when more than one
answered, and what cache misses cost), then what ctxmodes adds (model, mode, the context
window and what is left of it, archived windows, note writes).

Internal to ctxmodes: not part of the API; it may change in any release.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxmodes.compaction.tokens import Number
from ctxmodes.host.session_stats import SessionStats
from ctxmodes.host.usage_breakdown import CacheWaste, UsageShare
from ctxmodes.session.jsvalues import js_to_fixed
from ctxmodes.tui.usage_totals import pi_tokens


@dataclass(frozen=True, slots=True)
class ModeFacts:
    """What ``/session`` says of the session beyond Pi's report."""

    model: str
    mode: str
    window: int | None
    tokens_left: int | None
    usable_tokens: int
    archived_windows: int
    note_writes: int
    entries: int


def _count(value: Number) -> str:
    """A count as JavaScript's ``toLocaleString`` writes it in English: ``12,345``."""
    return f"{int(value):,}" if value == int(value) else f"{value:,}"


def _dollars(value: float) -> str:
    return f"${js_to_fixed(value, 3)}"


def session_report(
    stats: SessionStats,
    name: str | None,
    breakdown: list[UsageShare],
    waste: CacheWaste,
    facts: ModeFacts,
) -> str:
    tokens = stats.tokens
    lines = ["Session Info", ""]
    if name:
        lines.append(f"Name: {name}")
    lines += [
        f"File: {stats.session_file or 'In-memory'}",
        f"ID: {stats.session_id}",
        "",
        "Messages",
        f"Total: {stats.total_messages}",
        f"User: {stats.user_messages}",
        f"Assistant: {stats.assistant_messages}",
        f"Tools: {stats.tool_calls} calls, {stats.tool_results} results",
        "",
        "Tokens",
    ]
    # Input is the whole prompt; with the cache in use, what it served is set apart from
    # the rest (of which the cache writes are a part).
    prompt = tokens.input + tokens.cache_read + tokens.cache_write
    lines.append(f"Input: {_count(prompt)}")
    if prompt > 0 and (tokens.cache_read > 0 or tokens.cache_write > 0):
        rate = js_to_fixed(100 * tokens.cache_read / prompt, 1)
        lines.append(f"  Cached: {_count(tokens.cache_read)} ({rate}%)")
        written = (
            f" ({_count(tokens.cache_write)} written to cache)" if tokens.cache_write > 0 else ""
        )
        lines.append(f"  Uncached: {_count(tokens.input + tokens.cache_write)}{written}")
    lines += [f"Output: {_count(tokens.output)}", f"Total: {_count(tokens.total)}"]
    if tokens.cost > 0 or waste.missed_tokens > 0:
        lines += ["", "Cost", f"Total: {_dollars(float(tokens.cost))}"]
        if len(breakdown) > 1:
            lines += [
                f"  {share.key}: {_dollars(float(share.cost))} "
                f"({pi_tokens(int(share.tokens))} tokens)"
                for share in breakdown
            ]
        if waste.missed_tokens > 0:
            misses = "1 miss" if waste.miss_count == 1 else f"{waste.miss_count} misses"
            detail = f"{_count(waste.missed_tokens)} tokens, {misses}"
            if waste.missed_cost >= 0.0001:
                lines.append(f"Cache Re-billed: {_dollars(waste.missed_cost)} ({detail})")
            else:
                lines.append(f"Cache Re-billed: {detail}")
    left = "?" if facts.tokens_left is None else _count(facts.tokens_left)
    lines += [
        "",
        "Context",
        f"Model: {facts.model}",
        f"Mode: {facts.mode}",
        f"Window: {'-' if facts.window is None else facts.window}",
        f"Left: {left} of {_count(facts.usable_tokens)} usable tokens",
        f"Archived windows: {facts.archived_windows}",
        f"Note writes: {facts.note_writes}",
        f"Entries: {facts.entries}",
    ]
    return "\n".join(lines)
