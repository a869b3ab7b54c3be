"""Writing long session files fast: JSONL lines built as text, no API in the loop.

Tests and benchmarks of sessions with hundreds of thousands of entries cannot afford the
session manager's append path (validation, stamps, one write per entry). These builders
write the same bytes Pi writes for plain user / assistant exchanges, in three shapes:

* :func:`write_chain`: a single branch, every entry the child of the line before (what a
  long Pi session looks like);
* :func:`write_reversed_chain`: the same tree, but every entry written *before* its parent
  (the file order reversed), which defeats "parent is the previous line" fast paths;
* :func:`write_cycle`: a chain whose first entry names the last one as its parent, so the
  parent links form one cycle over the whole file (the store cuts it at the first entry),
  with ``tail`` more entries hanging off the cycle.

Each returns the ids in chain order, root first. Ids are 8 hexadecimal digits as Pi's; the
texts are deterministic.
"""

from __future__ import annotations

import json
from pathlib import Path

HEADER = (
    '{"type":"session","version":3,"id":"0190aaaa-bbbb-7ccc-8ddd-eeeeffff0000",'
    '"timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
)
_USAGE = (
    '"usage":{"input":10,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":20,'
    '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
)
#: Filler that brings an entry to the ~280 bytes of a typical short Pi exchange line.
_FILLER = "lorem ipsum dolor sit amet " * 3


def entry_id(n: int) -> str:
    return f"{n:08x}"


_USER = '"message":{"role":"user","content":"request %d ' + _FILLER + '","timestamp":%d}}\n'
_ASSISTANT = (
    '"message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}],'
    '"api":"scripted","provider":"scripted","model":"m",' + _USAGE + ',"stopReason":"stop",'
    '"timestamp":%d}}\n'
)


def entry_line(n: int, parent: str | None) -> str:
    """Entry ``n`` as Pi writes it: even numbers user messages, odd ones assistant replies."""
    parent_json = "null" if parent is None else f'"{parent}"'
    stamp = f"2025-01-01T00:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 1000:03d}Z"
    head = f'{{"type":"message","id":"{n:08x}","parentId":{parent_json},"timestamp":"{stamp}",'
    return head + (_ASSISTANT if n % 2 else _USER) % (n, n)


def _write(path: Path, lines: list[str]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        out.writelines(lines)


def compaction_line(n: int, parent: str, first_kept: str) -> str:
    """Entry ``n`` as a Pi compaction keeping the path from ``first_kept`` on."""
    return (
        f'{{"type":"compaction","id":"{entry_id(n)}","parentId":"{parent}",'
        f'"timestamp":"2025-01-01T00:00:00.000Z","summary":"compacted before {n}",'
        f'"firstKeptEntryId":"{first_kept}","tokensBefore":{n}}}\n'
    )


def write_chain(path: Path, count: int, *, compact_every: int = 0) -> list[str]:
    """One branch of ``count`` entries in file order; returns their ids root first.

    With ``compact_every`` every that many entries is a compaction keeping the last 20
    entries before it, as a long Pi session has them."""
    ids = [entry_id(n) for n in range(count)]
    lines = [entry_line(n, ids[n - 1] if n else None) for n in range(count)]
    if compact_every:
        for n in range(compact_every, count, compact_every):
            lines[n] = compaction_line(n, ids[n - 1], ids[max(0, n - 20)])
    _write(path, lines)
    return ids


def write_reversed_chain(path: Path, count: int) -> list[str]:
    """The tree of :func:`write_chain`, lines in reverse order (children before parents)."""
    ids = [entry_id(n) for n in range(count)]
    _write(path, [entry_line(n, ids[n - 1] if n else None) for n in range(count - 1, -1, -1)])
    return ids


def write_cycle(path: Path, count: int, tail: int = 0) -> list[str]:
    """A parent cycle through all ``count`` entries (the first names the last as parent),
    then ``tail`` entries continuing from the last one; returns the ids, chain order."""
    ids = [entry_id(n) for n in range(count + tail)]
    lines = [entry_line(0, ids[count - 1])]
    lines.extend(entry_line(n, ids[n - 1]) for n in range(1, count + tail))
    _write(path, lines)
    return ids


def append_line(path: Path, record: dict[str, object]) -> None:
    """Append one hand-made entry (compact JSON, as Pi writes it)."""
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
