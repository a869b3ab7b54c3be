"""Benchmark of the context-window history index: 100 windows, 100,000 entries, ~100 MB.

Run: ``.venv/bin/python bench/windows_index.py [--entries N] [--windows W] [--chars C]``

Builds a branch of user / assistant / tool-result entries with window markers spread evenly,
feeds it to :class:`ctxmodes.windows.state.WindowState` one entry at a time (the per-append
cost of keeping the index incremental), then times the history operations. Each latency is
the best of several runs. A search that finds nothing must scan every item: that is the
worst case the ``search ... (no match)`` lines show.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import time
from collections.abc import Callable

from ctxmodes.session.models import (
    AssistantMessage,
    Cost,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ctxmodes.windows.history import ItemFilter
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import window_marker
from ctxmodes.windows.state import WindowState

USAGE = Usage(
    input=1,
    output=1,
    cache_read=0,
    cache_write=0,
    total_tokens=2,
    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
)


def _words(rng: random.Random) -> list[str]:
    return ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(5000)]


def _text(rng: random.Random, words: list[str], chars: int) -> str:
    return " ".join(rng.choices(words, k=chars // 5))[:chars]


def build_branch(entries: int, windows: int, chars: int, seed: int = 7) -> list[SessionEntry]:
    rng = random.Random(seed)
    words = _words(rng)
    branch: list[SessionEntry] = []
    identity: WindowIdentity | None = None
    per_window = entries // windows
    parent: str | None = None
    for number in range(entries):
        entry_id = f"{number:08x}"
        base = {"id": entry_id, "parent_id": parent, "timestamp": "2026-01-01T00:00:00.000Z"}
        entry: SessionEntry
        if number % per_window == 0:
            identity = WindowIdentity.first() if identity is None else identity.advance()
            marker = window_marker(identity)
            entry = CustomMessageEntry(
                custom_type=marker.custom_type,
                content=marker.content,
                display=True,
                details=marker.details.dump(),
                **base,
            )
        elif number % 3 == 0:
            entry = MessageEntry(
                message=UserMessage(content=_text(rng, words, chars), timestamp=1), **base
            )
        elif number % 3 == 1:
            call = ToolCall(id="c", name="bash", arguments={"command": "ls"})
            message = AssistantMessage(
                content=[TextContent(text=_text(rng, words, chars)), call],
                api="bench",
                provider="bench",
                model="m",
                usage=USAGE,
                stop_reason="toolUse",
                timestamp=1,
            )
            entry = MessageEntry(message=message, **base)
        else:
            result = ToolResultMessage(
                tool_call_id="c",
                tool_name="bash",
                content=[TextContent(text=_text(rng, words, chars))],
                is_error=False,
                timestamp=1,
            )
            entry = MessageEntry(message=result, **base)
        branch.append(entry)
        parent = entry_id
    return branch


def best_ms(action: Callable[[], object], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--windows", type=int, default=100)
    parser.add_argument("--chars", type=int, default=1_000, help="characters per entry")
    args = parser.parse_args()

    started = time.perf_counter()
    branch = build_branch(args.entries, args.windows, args.chars)
    print(f"generated {len(branch):,} entries in {time.perf_counter() - started:.1f} s")

    state = WindowState()
    costs = []
    for entry in branch:
        start = time.perf_counter_ns()
        state.observe(entry)
        costs.append(time.perf_counter_ns() - start)
    windows = state.history.windows()
    every = ItemFilter()
    total_chars = sum(len(item.content) for w in windows for item in w.select(every))
    print(f"indexed text: {total_chars / 1e6:.1f} M characters in {len(windows)} windows")
    costs.sort()
    print(
        "per-append index cost: "
        f"mean {statistics.fmean(costs) / 1000:.1f} µs, "
        f"p50 {costs[len(costs) // 2] / 1000:.1f} µs, "
        f"p99 {costs[len(costs) * 99 // 100] / 1000:.1f} µs, "
        f"total {sum(costs) / 1e9:.2f} s"
    )
    rebuild = best_ms(lambda: WindowState.from_branch(branch), repeat=1)
    print(f"rebuild from branch: {rebuild:.0f} ms")

    reader = state.reader()
    middle = windows[len(windows) // 2]
    some_item = next(middle.select(every))
    newest = next(windows[-1].select(every, reverse=True))
    oldest = next(windows[0].select(every))
    rare_new = newest.content[100:120]
    rare_old = oldest.content[100:120]

    measurements = [
        ("list_windows (100)", lambda: reader.list_windows(limit=100)),
        ("list_items recent_first", lambda: reader.list_items(recent_first=True, limit=25)),
        ("list_items one window", lambda: reader.list_items(window_id=middle.window_id)),
        ("read_item", lambda: reader.read_item(middle.window_id, some_item.item_id)),
        ("search hit, newest first", lambda: reader.search_contents(rare_new, recent_first=True)),
        ("search hit, oldest first", lambda: reader.search_contents(rare_old)),
        (
            "search common word, newest first",
            lambda: reader.search_contents(" the", recent_first=True, limit=25),
        ),
        ("search no match, oldest first", lambda: reader.search_contents("zqzqzqzq")),
        (
            "search no match, newest first",
            lambda: reader.search_contents("zqzqzqzq", recent_first=True),
        ),
        ("search no match, 3 chars", lambda: reader.search_contents("qzx")),
    ]
    for name, action in measurements:
        print(f"{name:36s} {best_ms(action):8.2f} ms")


if __name__ == "__main__":
    main()
