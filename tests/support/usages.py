"""Usages as Pi records them on a reply, priced, for tests that sum or compare costs."""

from __future__ import annotations

from typing import Any

#: Dollars a token: input, output, cache read, cache write (a model priced at $3, $15,
#: $0.30 and $3.75 a million).
RATES = (3e-6, 15e-6, 0.3e-6, 3.75e-6)


def priced_usage(
    input: int,
    output: int = 10,
    read: int = 0,
    write: int = 0,
    *,
    rates: tuple[float, float, float, float] = RATES,
) -> dict[str, Any]:
    """A usage of these counts, each costing its count at its rate of ``rates``."""
    counts = (input, output, read, write)
    costs = [count * rate for count, rate in zip(counts, rates, strict=True)]
    return {
        "input": input,
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": sum(counts),
        "cost": {
            "input": costs[0],
            "output": costs[1],
            "cacheRead": costs[2],
            "cacheWrite": costs[3],
            "total": sum(costs),
        },
    }
