"""Benchmark of the context-window history index: 100 windows, 100,000 entries, ~100 MB.

Run: ``.venv/bin/python bench/windows_index.py [--entries N] [--windows W] [--chars C]``

Builds a branch of user / assistant / tool-result entries (as stored: the JSON objects of a
session file) with window markers spread evenly, and times:

* the per-append cost of keeping the state incremental: each entry fed to
  :meth:`ctxmodes.windows.state.WindowState.observe_stored`, as a session's subscription
  does;
* a rebuild from the stored branch (what a navigation costs once the store holds the
  entries), and a resume: the branch written to a session file, reopened, and the tracked
  state built from it (the store's open shown apart);
* the history operations. Each latency is the best of several runs. A search that finds
  fewer hits than its limit must scan every item: the ``search ... (no match)`` lines and
  the common-word search (whose words never start with "the") show that worst case.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from smoke import parse_args

from ctxmodes.session import codec
from ctxmodes.session import entries as make
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability
from ctxmodes.windows.history import ItemFilter
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import window_marker
from ctxmodes.windows.state import TrackedWindowState, WindowState

USAGE = {
    "input": 1,
    "output": 1,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 2,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
TIMESTAMP = "2026-01-01T00:00:00.000Z"


def _words(rng: random.Random) -> list[str]:
    return ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(5000)]


def _text(rng: random.Random, words: list[str], chars: int) -> str:
    return " ".join(rng.choices(words, k=chars // 5))[:chars]


def _message(number: int, rng: random.Random, words: list[str], chars: int) -> dict[str, Any]:
    text = _text(rng, words, chars)
    if number % 3 == 0:
        return {"role": "user", "content": text, "timestamp": 1}
    if number % 3 == 1:
        call = {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls"}}
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": text}, call],
            "api": "bench",
            "provider": "bench",
            "model": "m",
            "usage": USAGE,
            "stopReason": "toolUse",
            "timestamp": 1,
        }
    return {
        "role": "toolResult",
        "toolCallId": "c",
        "toolName": "bash",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 1,
    }


def build_branch(entries: int, windows: int, chars: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    words = _words(rng)
    branch: list[dict[str, Any]] = []
    identity: WindowIdentity | None = None
    per_window = entries // windows
    parent: str | None = None
    for number in range(entries):
        stamp = make.Stamp(id=f"{number:08x}", parent_id=parent, timestamp=TIMESTAMP)
        if number % per_window == 0:
            identity = WindowIdentity.first() if identity is None else identity.advance()
            marker = window_marker(identity)
            entry = make.custom_message(
                stamp, marker.custom_type, marker.content, True, marker.details.dump()
            )
        else:
            entry = make.message(stamp, _message(number, rng, words, chars))
        branch.append(entry)
        parent = stamp.id
    return branch


def write_session(branch: list[dict[str, Any]], directory: Path) -> Path:
    path = directory / "bench.jsonl"
    with path.open("wb") as file:
        file.write(codec.dumps_line(make.header(str(directory), "bench-session", TIMESTAMP)))
        file.writelines(codec.dumps_line(entry) for entry in branch)
    return path


def best_ms(action: Callable[[], object], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def resume_ms(path: Path) -> tuple[float, float]:
    """Milliseconds to open the session file, then to build its tracked window state."""
    start = time.perf_counter()
    manager = SessionManager.open(path, read_only=True, durability=Durability.NONE)
    opened = time.perf_counter()
    tracked = TrackedWindowState(manager)
    built = time.perf_counter()
    tracked.close()
    manager.close()
    return (opened - start) * 1000, (built - opened) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--windows", type=int, default=100)
    parser.add_argument("--chars", type=int, default=1_000, help="characters per entry")
    args = parse_args(parser, entries=2000, windows=4, chars=100)

    started = time.perf_counter()
    branch = build_branch(args.entries, args.windows, args.chars)
    print(f"generated {len(branch):,} entries in {time.perf_counter() - started:.1f} s")

    state = WindowState()
    costs = []
    for entry in branch:
        start = time.perf_counter_ns()
        state.observe_stored(entry)
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
    rebuild = best_ms(lambda: WindowState.from_stored_branch(branch), repeat=1)
    print(f"rebuild from the stored branch: {rebuild:.0f} ms")
    with tempfile.TemporaryDirectory() as directory:
        path = write_session(branch, Path(directory))
        opened, built = resume_ms(path)
    print(f"resume: open the session file {opened:.0f} ms, then build the state {built:.0f} ms")

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
        ("search no match, non-ASCII", lambda: reader.search_contents("naïve")),
    ]
    for name, action in measurements:
        print(f"{name:36s} {best_ms(action):8.2f} ms")


if __name__ == "__main__":
    main()
