"""Appending to a session: durable appends against a raw write + fdatasync loop, and
buffered appends per second.

Run: ``.venv/bin/python bench/appends.py [--durable N] [--buffered N] [--rounds N]``

The anchor is the cheapest durable append there is: ``os.write`` of the same line bytes and
``os.fdatasync`` on a file in the same directory, one per line. The session runs with
``Durability.FSYNC`` (``SessionManager.append_message`` returns once the line is on disk), so
the ratio anchor ÷ session (throughputs) says how much the manager adds on top of the disk:
id and timestamp, the line encoder, the index update. Buffered appends
(``Durability.NONE``) are pure CPU. Rounds alternate the two durable loops, so that noise
from other processes hits both alike; figures are medians with the spread.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from smoke import parse_args

from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability

TEXT = "a line of work that an agent appends to its session, about a hundred characters long."


def _message(n: int) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": f"{n} {TEXT}"}], "timestamp": n}


def raw_loop(directory: Path, lines: list[bytes]) -> float:
    """Seconds for ``os.write`` + ``os.fdatasync`` of each line to a new file."""
    fd = os.open(directory / "raw.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        started = time.perf_counter()
        for line in lines:
            os.write(fd, line)
            os.fdatasync(fd)
        return time.perf_counter() - started
    finally:
        os.close(fd)
        os.unlink(directory / "raw.jsonl")


def session_loop(directory: Path, count: int, durability: Durability) -> float:
    """Seconds for ``count`` ``append_message`` calls on a new session file."""
    manager = SessionManager.create(directory, directory / "sessions", durability=durability)
    try:
        started = time.perf_counter()
        for n in range(count):
            manager.append_message(_message(n))
        manager.flush()
        return time.perf_counter() - started
    finally:
        manager.close()


def _typical_lines(directory: Path, count: int) -> list[bytes]:
    """The bytes the session writes for ``count`` messages, for the raw loop to write."""
    with SessionManager.in_memory(directory) as manager:
        for n in range(count):
            manager.append_message(_message(n))
        return [
            codec.dumps_line(entry)
            for entry in map(manager.get_entry_json, manager.get_branch_ids())
        ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durable", type=int, default=300, help="durable appends per round")
    parser.add_argument("--buffered", type=int, default=100_000, help="buffered appends")
    parser.add_argument("--rounds", type=int, default=5)
    args = parse_args(parser, durable=20, buffered=2000, rounds=2)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as name:
        directory = Path(name)
        lines = _typical_lines(directory, args.durable)
        raw: list[float] = []
        ours: list[float] = []
        for _ in range(args.rounds):
            raw.append(args.durable / raw_loop(directory, lines))
            ours.append(args.durable / session_loop(directory, args.durable, Durability.FSYNC))
        buffered = [
            args.buffered / session_loop(directory, args.buffered, Durability.NONE)
            for _ in range(args.rounds)
        ]
    print(f"{args.rounds} rounds, appends per second: median (lowest to highest)")
    for name, rates in (("raw write + fdatasync", raw), ("session, fsync", ours)):
        print(f"  {name:24} {statistics.median(rates):9.0f} ({min(rates):.0f} to {max(rates):.0f})")
    ratios = [ours_rate / raw_rate for ours_rate, raw_rate in zip(ours, raw, strict=True)]
    print(
        f"  durable ÷ raw, per round: median {statistics.median(ratios):.2f} "
        f"({min(ratios):.2f} to {max(ratios):.2f})"
    )
    print(
        f"  session, buffered        {statistics.median(buffered):9.0f} "
        f"({min(buffered):.0f} to {max(buffered):.0f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
