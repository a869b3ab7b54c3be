"""Benchmark of Tree mode's per-turn work: projection and history with 50 archived windows.

Run: ``.venv/bin/python bench/tree_index.py [--sizes 10000,100000] [--archives 50]``

For each size it writes a session file of user / assistant / tool-result exchanges (~600
characters each) cut into ``--archives`` Tree rollovers (branch summary, archive manifest,
note snapshot, window marker), reopens it as a resumed session, and times:

* ``resume``: building Tree's state from the reopened file and reading its archives (once
  per session start);
* ``projection``: what runs before every model request: ``project_tree_context`` alone,
  and together with the host building the context it projects;
* ``append``: the cost of one append to the indexes (subscription callbacks);
* history operations a model makes after a rollover: the first call (a listing counts items
  from the session index; a search reads the archives it touches only as far as its hits,
  and a read by id normalizes its archive, once) and then warm calls.

Per-turn figures must stay flat in session length: the printed ratios compare the largest
size with the smallest in the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sizes import best, compare_sizes, once
from smoke import parse_args

from ctxmodes.events import ContextProjection
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import window_marker
from ctxmodes.windows.retrieval import answer_history
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE, manifest_for_summary
from ctxmodes_tree.projection import project_tree_context
from ctxmodes_tree.state import TreeState

USAGE = {
    "input": 10,
    "output": 10,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 20,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
SNAPSHOT = {"protocol": 1, "timestamp": 1, "files": []}


class Writer:
    def __init__(self, manager: SessionManager, seed: int = 11) -> None:
        self.manager = manager
        self.rng = random.Random(seed)
        self.words = [
            "".join(self.rng.choices(string.ascii_lowercase, k=self.rng.randint(3, 9)))
            for _ in range(4000)
        ]
        self.identity = WindowIdentity.first()
        self.boundary = self.marker()
        self.archived = 0

    def text(self, chars: int = 600) -> str:
        return " ".join(self.rng.choices(self.words, k=chars // 5))[:chars]

    def marker(self) -> str:
        marker = window_marker(self.identity)
        return self.manager.append_custom_message_entry(
            marker.custom_type, marker.content, True, marker.details.dump()
        )

    def exchange(self, tag: str) -> None:
        append = self.manager.append_message
        append({"role": "user", "content": [{"type": "text", "text": self.text()}], "timestamp": 1})
        call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
        append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": self.text()}, call],
                "api": "scripted",
                "provider": "scripted",
                "model": "m",
                "usage": USAGE,
                "stopReason": "toolUse",
                "timestamp": 1,
            }
        )
        append(
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "bash",
                "content": [{"type": "text", "text": f"{tag} {self.text()}"}],
                "isError": False,
                "timestamp": 1,
            }
        )

    def rollover(self) -> None:
        manager = self.manager
        target = manager.get_entry(self.boundary)
        assert target is not None
        summary_id = manager.branch_with_summary(
            target.parent_id, f"archive-{self.archived} summary: {self.text(300)}"
        )
        summary = manager.get_entry(summary_id)
        data = manifest_for_summary(self.identity.current_window_id, self.boundary, summary)
        manager.append_custom_entry(TREE_ARCHIVE_CUSTOM_TYPE, data.dump())
        manager.append_custom_entry("codex-context-note-snapshot", SNAPSHOT)
        self.identity = self.identity.advance()
        self.boundary = self.marker()
        self.archived += 1


#: Exchanges (3 entries each) in the current window: the same at every session size, so the
#: per-turn figures compare sessions that differ only in what was archived.
CURRENT_WINDOW_EXCHANGES = 100


def build(path: Path, entries: int, archives: int) -> Path:
    manager = SessionManager.create(path, path / "sessions", durability=Durability.NONE)
    writer = Writer(manager)
    archived_exchanges = max(1, (entries - 3 * CURRENT_WINDOW_EXCHANGES) // (3 * archives))
    for window in range(archives + 1):
        exchanges = archived_exchanges if window < archives else CURRENT_WINDOW_EXCHANGES
        for n in range(exchanges):
            writer.exchange(f"detail-w{window}-n{n}")
        if window < archives:
            writer.rollover()
    file = manager.session_file
    assert file is not None
    manager.close()
    return file


def history(state: TreeState, action: str, **arguments: Any) -> dict[str, Any]:
    result = answer_history(state.reader(), action, arguments)
    assert not result.is_error, result.text
    decoded: dict[str, Any] = json.loads(result.text)
    return decoded


def measure(file: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    manager = SessionManager.open(file, durability=Durability.NONE)
    holder: list[TreeState] = []

    def resume() -> None:
        state = TreeState(manager)
        state.archives.has_archives()  # the archive index reads the branch on first use
        holder.append(state)

    figures["resume (build state)"] = once(resume)
    state = holder[0]
    figures["entries (count)"] = manager.entry_count()

    def append() -> None:
        manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": "next"}], "timestamp": 1}
        )

    figures["append (indexes)"] = best(append, repeat=50)

    from ctxmodes.host.branch_view import LazyBranch

    def projection() -> ContextProjection:
        # What the host hands the mode before each request.
        return ContextProjection(
            messages=list(manager.build_session_context().messages), branch=LazyBranch(manager)
        )

    figures["host context + projection (per turn)"] = best(
        lambda: project_tree_context(projection(), state.archives)
    )
    ready = projection()
    figures["projection alone (per turn)"] = best(
        lambda: project_tree_context(ready, state.archives)
    )
    # What a model does first after a rollover: read the summary its marker names, then
    # search for a detail. Cold figures include reading the archived entries they touch.
    latest = state.archives.latest
    assert latest is not None
    figures["cold read_item (latest summary)"] = once(
        lambda: history(state, "read_item", window_id=latest.window_id, item_id=latest.summary.id)
    )
    figures["cold search (recent raw hit)"] = once(
        lambda: history(state, "search_contents", query="detail-w49-", recent_first=True)
    )
    figures["cold list_windows (counts from the index)"] = once(
        lambda: history(state, "list_windows", limit=100)
    )
    windows = history(state, "list_windows", limit=100)["windows"]
    oldest = windows[0]["window_id"]
    figures["list_windows"] = best(lambda: history(state, "list_windows", limit=100))
    summary_id = history(state, "list_items", window_id=oldest, limit=1)["items"][0]["item_id"]
    figures["read_item (oldest summary)"] = best(
        lambda: history(state, "read_item", window_id=oldest, item_id=summary_id)
    )
    # The newest raw item of the oldest window (older ones may be past the per-archive bound).
    raw = history(state, "search_contents", query="detail-w0-", recent_first=True, limit=1)[
        "items"
    ][0]
    figures["read_item (oldest raw)"] = best(
        lambda: history(state, "read_item", window_id=oldest, item_id=raw["item_id"])
    )
    figures["search (summary hit)"] = best(
        lambda: history(state, "search_contents", query="archive-3 summary")
    )
    figures["search (recent raw hit, recent_first)"] = best(
        lambda: history(state, "search_contents", query="detail-w50-", recent_first=True)
    )
    figures["list_items (one window)"] = best(
        lambda: history(state, "list_items", window_id=oldest, limit=25)
    )
    figures["search (no match, full scan)"] = best(
        lambda: history(state, "search_contents", query="zzzz-never"), repeat=3
    )
    state.close()
    manager.close()
    return figures


def run_over_sizes(
    doc: str, default_sizes: str, measure_file: Callable[[Path], dict[str, float]]
) -> None:
    """Parse ``--sizes`` and ``--archives``, then measure a Tree session of each size."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--sizes", default=default_sizes)
    parser.add_argument("--archives", type=int, default=50)
    args = parse_args(parser, sizes="300,600", archives=3)
    compare_sizes(
        args,
        lambda path, size: build(path, size, args.archives),
        measure_file,
        f"{args.archives} archives",
    )


if __name__ == "__main__":
    run_over_sizes(__doc__, "10000,100000", measure)
