"""Benchmark of Tree's cold history: the first history calls after a resume, 10k to 1M entries.

Run: ``.venv/bin/python bench/tree_cold_history.py [--sizes 10000,100000,1000000]
[--archives 50]``

Each size is the session of ``tree_index.py`` (``--archives`` rollovers of ~600-character
exchanges, the same current window at every size), reopened from its file. For every call a
fresh resumed state is built, so each figure is a first call after a resume:

* ``resume``: Tree's state from the reopened file, archives verified (once per start, over
  each archived path's runs of consecutive lines, not its entries);
* ``first list_windows``: every window with its item count (counted from the session index,
  nothing normalized);
* ``first list_items``: the latest archived window's first items (reads only those entries);
* ``first read_item``: the summary the current window's marker names (no normalization);
* ``first search_contents``: a detail of the latest archived window, newest first, and one
  of the oldest window, oldest first (each reads the stored entries of one window only as
  far as its hits).

Each of those figures is the fastest of five, each first call on a freshly resumed state.
A search that finds fewer hits than its page is measured on a session opened afresh for
every call (nothing of the file decoded in the process; the operating system's page cache
still holds the file), each figure the fastest of three such calls:

* ``no hit, no cache``: a session written before Tree kept a search cache, or by the
  TypeScript extension: the search reads every archive within Tree's per-archive bounds;
* ``no hit, no cache, writing``: that first search once more, in a process holding the
  session open for writing, which makes the filters of as many archives as its reading pays
  for (the rest come with later searches and resumes); the ratio to the read-only search
  shows what this lazy making adds;
* ``search cache made``: every archive's filters made as rollovers make them, and the cache
  written;
* ``no hit, cache``: with the cache, the search reads no archive (and the ratio of the two,
  measured in the same run);
* ``one hit, cache``: a detail of the middle archive; the cache rules out the other
  archives, and in the one that holds the hit, every block of 128 entries whose own filter
  rules the query out;
* the anchor, in the same run: the same cache made with no filter per block (each window
  one block, as the cache was before it kept them), its making time, its size, and the same
  one-hit search, which then reads the archive that holds the hit within its bounds.

The first calls should stay flat from the smallest size to the largest: the ratio column
compares them in the same run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sizes import once
from tree_index import history, run_over_sizes

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability
from ctxmodes_tree import window_filter
from ctxmodes_tree.search_cache import CACHE_SUFFIX
from ctxmodes_tree.state import TreeState

NOWHERE = "found-nowhere"
#: Sessions opened afresh for each search that finds fewer hits than its page; the fastest
#: counts (the machine's other load only adds time).
COLD_RUNS = 3


def measure(file: Path) -> dict[str, float]:
    manager = SessionManager.open(file, read_only=True, durability=Durability.NONE)
    figures: dict[str, float] = {"entries (count)": manager.entry_count()}

    def resumed() -> TreeState:
        state = TreeState(manager)
        state.archives.has_archives()
        return state

    def resume() -> float:
        built: list[TreeState] = []
        elapsed = once(lambda: built.append(resumed()))
        built[0].close()
        return elapsed

    # The fastest of five, like the first calls below.
    figures["resume (build state, verify archives)"] = min(resume() for _ in range(5))

    def first(name: str, call: Callable[[TreeState], Any]) -> None:
        # The fastest of five first calls, each on a freshly resumed state: a first call is
        # short enough that one sample mostly measures the machine's other load.
        samples = []
        for _ in range(5):
            state = resumed()
            samples.append(once(lambda state=state: call(state)))
            state.close()
        figures[name] = min(samples)

    first("first list_windows (limit 100)", lambda s: history(s, "list_windows", limit=100))
    first("first list_windows (default limit)", lambda s: history(s, "list_windows"))

    def latest_items(state: TreeState) -> Any:
        latest = state.archives.latest
        assert latest is not None
        return history(state, "list_items", window_id=latest.window_id, limit=10)

    first("first list_items (latest archive)", latest_items)

    def latest_summary(state: TreeState) -> Any:
        latest = state.archives.latest
        assert latest is not None
        return history(state, "read_item", window_id=latest.window_id, item_id=latest.summary.id)

    first("first read_item (latest summary)", latest_summary)

    def search(query: str, recent_first: bool, *, hits: bool = True) -> Callable[[TreeState], Any]:
        def call(state: TreeState) -> Any:
            found = history(state, "search_contents", query=query, recent_first=recent_first)
            assert bool(found["items"]) is hits, query
            return found

        return call

    # Details of the newest and the oldest archive: tree_index.py tags each tool result
    # with its window's number.
    probe = resumed()
    newest = len(probe.archives.archives) - 1
    # The newest detail of the middle archive (within its bounds at every size), whose tag
    # ends with a space so that "-n1 " does not match "-n10".
    (newest_middle,) = history(
        probe, "search_contents", query=f"detail-w{newest // 2}-", recent_first=True, limit=1
    )["items"]
    one_hit = newest_middle["truncated_content"].split(" ")[0] + " "
    probe.close()
    first("first search_contents (newest archive)", search(f"detail-w{newest}-", True))
    first("first search_contents (oldest archive)", search("detail-w0-", False))
    manager.close()
    cold_searches(file, figures, one_hit)
    return figures


@contextmanager
def window_filters_only() -> Iterator[None]:
    """Filters made meanwhile keep no block filters: each window is one block."""
    kept = window_filter.BLOCK_ENTRIES
    setattr(window_filter, "BLOCK_ENTRIES", sys.maxsize)  # noqa: B010 (a Final constant)
    try:
        yield
    finally:
        setattr(window_filter, "BLOCK_ENTRIES", kept)  # noqa: B010


def cold_searches(file: Path, figures: dict[str, float], one_hit: str) -> None:
    """The searches that find fewer hits than their page, each on a session opened afresh."""
    cache = Path(f"{file}{CACHE_SUFFIX}")
    cache.unlink(missing_ok=True)

    def cold(query: str, hits: int, *, read_only: bool = True) -> float:
        manager = SessionManager.open(file, read_only=read_only, durability=Durability.NONE)
        state = TreeState(manager)
        state.archives.has_archives()
        found: list[Any] = []
        elapsed = once(lambda: found.append(history(state, "search_contents", query=query)))
        state.close()
        manager.close()
        assert len(found[0]["items"]) == hits, query
        return elapsed

    def make_all() -> float:
        cache.unlink(missing_ok=True)
        manager = SessionManager.open(file, read_only=False, durability=Durability.NONE)
        state = TreeState(manager)
        elapsed = once(
            lambda: [window.index_contents() for window in state.archive_history.windows()]
        )
        state.close()
        manager.close()
        return elapsed

    runs = COLD_RUNS
    figures["first search_contents (no hit, no cache)"] = min(cold(NOWHERE, 0) for _ in range(runs))
    assert not cache.exists()
    writing = cold(NOWHERE, 0, read_only=False)
    figures["first search_contents (no hit, no cache, writing)"] = writing
    figures["no hit, no cache: writing / read-only (count)"] = writing / max(
        figures["first search_contents (no hit, no cache)"], 1e-6
    )
    # The anchor: the cache without block filters.
    with window_filters_only():
        figures["window filters only: made"] = make_all()
    figures["window filters only: file (bytes)"] = cache.stat().st_size
    one_hit_windows = min(cold(one_hit, 1) for _ in range(runs))
    figures["window filters only: one hit"] = one_hit_windows
    figures["search cache made (every archive)"] = make_all()
    figures["search cache file (bytes)"] = cache.stat().st_size
    figures["first search_contents (no hit, cache)"] = min(cold(NOWHERE, 0) for _ in range(runs))
    # The anchor, in the same run: the same search without the cache.
    figures["no hit: no cache / cache (count)"] = figures[
        "first search_contents (no hit, no cache)"
    ] / max(figures["first search_contents (no hit, cache)"], 1e-6)
    one_hit_blocks = min(cold(one_hit, 1) for _ in range(runs))
    figures["first search_contents (one hit, cache)"] = one_hit_blocks
    figures["one hit: window filters only / blocks (count)"] = one_hit_windows / max(
        one_hit_blocks, 1e-6
    )


if __name__ == "__main__":
    run_over_sizes(__doc__, "10000,100000,1000000", measure)
