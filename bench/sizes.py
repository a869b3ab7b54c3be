"""What the size-comparing benchmarks share: timing helpers and a run over several session
sizes that prints each figure side by side with the ratio largest ÷ smallest."""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def best(fn: Callable[[], Any], repeat: int = 7) -> float:
    """The fastest of ``repeat`` calls, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def once(fn: Callable[[], Any]) -> float:
    """One call, in milliseconds (for work that only happens once, such as a cold read)."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def compare_sizes(
    args: argparse.Namespace,
    build: Callable[[Path, int], Path],
    measure: Callable[[Path], dict[str, float]],
    what: str,
) -> None:
    """Build and measure a session per size in ``args.sizes`` (comma-separated), then print
    the table. Figures whose name ends with ``(count)`` or ``(bytes)`` are counts, the others
    milliseconds."""
    sizes = [int(size) for size in args.sizes.split(",")]
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            start = time.perf_counter()
            file = build(Path(tmp) / str(size), size)
            print(f"built {size} entries, {what} in {time.perf_counter() - start:.1f} s")
            results[size] = measure(file)
    small, large = min(sizes), max(sizes)
    print(f"\n{'operation':44} " + " ".join(f"{s:>10}" for s in sizes) + "   ratio")
    for name in results[small]:
        unit = "" if name.endswith(("(count)", "(bytes)")) else "ms"
        row = " ".join(f"{results[s][name]:9.3f}{unit}" for s in sizes)
        ratio = results[large][name] / max(results[small][name], 1e-6)
        print(f"{name:44} {row}   {ratio:5.2f}x")
