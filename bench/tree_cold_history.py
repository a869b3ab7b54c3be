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
  far as its hits); and a text found nowhere, which reads every archive within Tree's
  per-archive bounds (it grows with the archives until the bounds cut them: the one figure
  here that is not meant to stay flat).

Each figure is the fastest of five, each first call on a freshly resumed state. The first
calls should stay flat from the smallest size to the largest: the ratio column compares them
in the same run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sizes import once
from tree_index import history, run_over_sizes

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability
from ctxmodes_tree.state import TreeState


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
    probe.close()
    first("first search_contents (newest archive)", search(f"detail-w{newest}-", True))
    first("first search_contents (oldest archive)", search("detail-w0-", False))
    first(
        "first search_contents (no hit: every archive)", search("found-nowhere", False, hits=False)
    )
    manager.close()
    return figures


if __name__ == "__main__":
    run_over_sizes(__doc__, "10000,100000,1000000", measure)
