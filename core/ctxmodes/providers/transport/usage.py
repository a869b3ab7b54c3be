"""Cost of a message's usage, computed exactly as pi-ai computes it."""

from __future__ import annotations

from ctxmodes.providers.catalog import CostTier, ModelCost, ModelSpec
from ctxmodes.providers.wire import JsonObject


def calculate_cost(model: ModelSpec, usage: JsonObject) -> None:
    """pi-ai's ``calculateCost``, with the same floating-point operations in the same order."""
    input_tokens = usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
    rates: ModelCost | CostTier = model.cost
    matched = -1.0
    for tier in model.cost.tiers or ():
        if input_tokens > tier.input_tokens_above and tier.input_tokens_above > matched:
            rates, matched = tier, tier.input_tokens_above
    long_write = usage.get("cacheWrite1h") or 0
    short_write = usage["cacheWrite"] - long_write
    cost = usage["cost"]
    cost["input"] = _num((rates.input / 1000000) * usage["input"])
    cost["output"] = _num((rates.output / 1000000) * usage["output"])
    cost["cacheRead"] = _num((rates.cache_read / 1000000) * usage["cacheRead"])
    cost["cacheWrite"] = _num(
        (rates.cache_write * short_write + rates.input * 2 * long_write) / 1000000
    )
    cost["total"] = _num(cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"])


def apply_service_tier(model: ModelSpec, usage: JsonObject, tier: str | None) -> None:
    """Flex halves the price, priority doubles it (2.5x for gpt-5.5)."""
    multiplier = {"flex": 0.5, "priority": 2.5 if model.id == "gpt-5.5" else 2}.get(tier or "", 1)
    if multiplier == 1:
        return
    cost = usage["cost"]
    for key in ("input", "output", "cacheRead", "cacheWrite"):
        cost[key] = _num(cost[key] * multiplier)
    cost["total"] = _num(cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"])


def _num(value: float) -> float | int:
    # JavaScript has one number type: an integral result prints without a fraction.
    return int(value) if isinstance(value, float) and value.is_integer() else value
