"""A session's cost per model and the prompt tokens its cache missed, as Pi's ``/session``
counts them; judged against Pi's own functions on varied sessions."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import run_pi_script
from support.usages import priced_usage

from ctxmodes.host.usage_breakdown import (
    NOISE_FLOOR_TOKENS,
    SUMMARIES_KEY,
    CacheWaste,
    UsageShare,
    cache_waste,
    usage_breakdown,
)
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import to_json

MODELS = [("anthropic", "claude", None), ("openai", "gpt", "gpt-2026-01"), ("loop", "m", None)]


def reply(spent: dict[str, Any], model: tuple[str, str, str | None] = MODELS[0], **extra: Any):
    provider, model_id, response_model = model
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model_id,
        "usage": spent,
        "stopReason": "stop",
        "timestamp": 1,
        **extra,
    }
    if response_model is not None:
        message["responseModel"] = response_model
    return message


def prompt(manager: SessionManager) -> str:
    return manager.append_message({"role": "user", "content": "q", "timestamp": 1})


def no_prices(provider: str, model_id: str) -> float | None:
    return None


def test_each_model_that_answered_costs_its_share_dearest_first() -> None:
    manager = SessionManager.in_memory("/p")
    prompt(manager)
    manager.append_message(reply(priced_usage(1_000), MODELS[2]))
    manager.append_message(reply(priced_usage(4_000, read=2_000), MODELS[1]))
    # A failed reply was paid for too.
    manager.append_message(
        reply(priced_usage(500), MODELS[2], stopReason="error", errorMessage="x")
    )
    first = manager.get_entries()[0].id
    manager.append_compaction("summary", first, 9_000, usage=priced_usage(700))
    manager.append_message(reply(priced_usage(0, 0), MODELS[0]))  # nothing spent: left out
    shares = usage_breakdown(manager.get_entries())
    assert [share.key for share in shares] == ["openai/gpt-2026-01", "loop/m", SUMMARIES_KEY]
    assert shares[1] == UsageShare("loop/m", pytest.approx(1_500 * 3e-6 + 20 * 15e-6), 1_520)


def test_a_cache_miss_counts_the_prompt_sent_before_that_the_cache_did_not_serve() -> None:
    manager = SessionManager.in_memory("/p")
    prompt(manager)
    manager.append_message(reply(priced_usage(2_000, write=8_000)))
    prompt(manager)
    # 10,000 tokens were sent before; the cache served 3,000 of this 12,000-token prompt.
    manager.append_message(reply(priced_usage(9_000, read=3_000)))
    waste = cache_waste(manager.get_entries(), no_prices)
    paid_rate, read_rate = 3e-6, 0.3e-6
    assert waste == CacheWaste(7_000, pytest.approx(7_000 * (paid_rate - read_rate)), 1)


def test_small_misses_providers_without_a_cache_and_compactions_count_nothing() -> None:
    uncached = SessionManager.in_memory("/p")
    prompt(uncached)
    uncached.append_message(reply(priced_usage(5_000)))  # the provider never reports its cache
    uncached.append_message(reply(priced_usage(6_000)))
    assert cache_waste(uncached.get_entries(), no_prices) == CacheWaste()
    small = SessionManager.in_memory("/p")
    prompt(small)
    small.append_message(reply(priced_usage(100, write=6_000)))
    # Of the 6,100 tokens sent before, the floor's worth were not read from the cache.
    small.append_message(reply(priced_usage(2_000, read=6_100 - NOISE_FLOOR_TOKENS)))
    assert cache_waste(small.get_entries(), no_prices) == CacheWaste()
    small.append_compaction("summary", small.get_entries()[0].id, 9_000)
    small.append_message(reply(priced_usage(3_000)))  # a new context after the compaction
    assert cache_waste(small.get_entries(), no_prices) == CacheWaste()


def test_a_miss_with_no_cache_read_is_priced_at_the_model_s_cache_read_rate() -> None:
    manager = SessionManager.in_memory("/p")
    prompt(manager)
    manager.append_message(reply(priced_usage(1_000, read=9_000)))
    manager.append_message(reply(priced_usage(10_000)))  # the whole prompt paid again
    prices = {("anthropic", "claude"): 0.3}  # dollars per million tokens
    waste = cache_waste(manager.get_entries(), lambda p, m: prices.get((p, m)))
    assert waste == CacheWaste(10_000, pytest.approx(10_000 * (3e-6 - 0.3e-6)), 1)
    assert cache_waste(manager.get_entries(), no_prices).missed_cost == pytest.approx(0.03)


def _varied_session(rng: random.Random) -> SessionManager:
    manager = SessionManager.in_memory("/p")
    prompt(manager)
    for _ in range(rng.randrange(1, 14)):
        step = rng.random()
        if step < 0.1:
            first = manager.get_entries()[0].id
            spent = priced_usage(rng.randrange(0, 3_000)) if rng.random() < 0.7 else None
            manager.append_compaction("summary", first, 9_000, usage=spent)
            continue
        if step < 0.2:
            manager.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "ask",
                    "content": [{"type": "text", "text": "done"}],
                    "isError": False,
                    "usage": priced_usage(rng.randrange(0, 900)),
                    "timestamp": 1,
                }
            )
            continue
        prompt_size = rng.choice([0, rng.randrange(1, 3_000), rng.randrange(3_000, 40_000)])
        read = rng.randrange(0, prompt_size + 1) if rng.random() < 0.6 else 0
        write = rng.randrange(0, prompt_size - read + 1) if rng.random() < 0.3 else 0
        rates = tuple(rng.choice([0.0, 1e-7, 3e-6, 15e-6]) for _ in range(4))
        spent = priced_usage(
            prompt_size - read - write, rng.randrange(0, 500), read, write, rates=rates
        )
        stop = rng.choice(["stop", "stop", "toolUse", "error", "aborted"])
        manager.append_message(reply(spent, rng.choice(MODELS), stopReason=stop))
    return manager


@pytest.mark.pi
def test_as_pi_counts_them_on_varied_sessions() -> None:
    rng = random.Random(23)
    prices = {"anthropic/claude": 0.3, "openai/gpt": 1.25}
    sessions = [_varied_session(rng) for _ in range(150)]
    payload = [
        {
            "entries": [to_json(entry) for entry in m.get_entries()],
            "prices": prices,
        }
        for m in sessions
    ]
    script = Path(__file__).parents[2] / "support" / "pi_usage_breakdown.mjs"
    judged = run_pi_script(script, stdin=json.dumps(payload))
    misses = 0
    for manager, pi in zip(sessions, judged, strict=True):
        entries = manager.get_entries()
        shares = usage_breakdown(entries)
        assert [(s.key, s.tokens) for s in shares] == [
            (share["key"], share["tokens"]) for share in pi["breakdown"]
        ]
        assert [s.cost for s in shares] == pytest.approx([s["cost"] for s in pi["breakdown"]])
        waste = cache_waste(entries, lambda p, m: prices.get(f"{p}/{m}"))
        assert (waste.missed_tokens, waste.miss_count) == (
            pi["waste"]["missedTokens"],
            pi["waste"]["missCount"],
        )
        assert waste.missed_cost == pytest.approx(pi["waste"]["missedCost"])
        misses += waste.miss_count
    assert misses > 20  # the sessions do miss the cache, often
