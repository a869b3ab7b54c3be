"""Appending to a session: durable appends against a raw write + fdatasync loop, and
buffered appends per second.

Run: ``.venv/bin/python bench/appends.py [--durable N] [--chunk N] [--buffered N] [--rounds N]``

The anchor is the cheapest durable append there is: ``os.write`` of the same line bytes and
``os.fdatasync`` on a file in the same directory, one per line. The session runs with
``Durability.FSYNC`` (``SessionManager.append_message`` returns once the line is on disk), so
the ratio session ÷ anchor (throughputs) says how much the manager adds on top of the disk:
id and timestamp, the line encoder, the index update.

A shared disk's latency drifts by whole factors within seconds, so each round interleaves
the two loops append by append (``--chunk`` appends at a time), in the order raw, session,
session, raw, … (each loop going first as often as second), on one file each that stays
open for the round; a round's ratio compares the two loops' total times. Buffered appends
(``Durability.NONE``) are pure CPU: their rate is given by wall-clock time and by the
process's CPU time, which other processes on a loaded machine do not inflate. The agent
host reads every entry it appends (a subscriber receives it, the next request builds the
context), so a last loop of buffered appends does that too: its CPU rate is an append as a
session in use pays for it. Figures are medians with the lowest and highest round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from smoke import parse_args

from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability

TEXT = "a line of work that an agent appends to its session, about a hundred characters long."


def _message(n: int) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": f"{n} {TEXT}"}], "timestamp": n}


@contextmanager
def raw_file(directory: Path) -> Iterator[int]:
    """A new file opened for appending, removed afterwards."""
    path = directory / "raw.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        yield fd
    finally:
        os.close(fd)
        path.unlink()


def raw_chunk(fd: int, lines: Sequence[bytes]) -> float:
    """Seconds for ``os.write`` + ``os.fdatasync`` of each line."""
    started = time.perf_counter()
    for line in lines:
        os.write(fd, line)
        os.fdatasync(fd)
    return time.perf_counter() - started


def session_chunk(manager: SessionManager, numbers: range) -> float:
    """Seconds for one ``append_message`` per number."""
    started = time.perf_counter()
    for n in numbers:
        manager.append_message(_message(n))
    manager.flush()
    return time.perf_counter() - started


def durable_round(directory: Path, lines: Sequence[bytes], chunk: int) -> tuple[float, float]:
    """Seconds the raw loop and the durable session took for ``lines``, interleaved."""
    raw = ours = 0.0
    manager = SessionManager.create(directory, directory / "sessions", durability=Durability.FSYNC)
    try:
        with raw_file(directory) as fd:
            # The first append creates each file (and the session's header): not timed.
            raw_chunk(fd, lines[:1])
            session_chunk(manager, range(1))
            for number, start in enumerate(range(1, len(lines), chunk)):
                stop = min(start + chunk, len(lines))
                if number % 2 == 0:
                    raw += raw_chunk(fd, lines[start:stop])
                    ours += session_chunk(manager, range(start, stop))
                else:
                    ours += session_chunk(manager, range(start, stop))
                    raw += raw_chunk(fd, lines[start:stop])
    finally:
        manager.close()
    return raw, ours


def buffered_round(directory: Path, count: int) -> tuple[float, float]:
    """Appends per second of wall-clock and of CPU time for ``count`` buffered appends."""
    manager = SessionManager.create(directory, directory / "sessions", durability=Durability.NONE)
    try:
        cpu = time.process_time()
        wall = session_chunk(manager, range(count))
        cpu = time.process_time() - cpu
    finally:
        manager.close()
    return count / wall, count / cpu


def read_round(directory: Path, count: int) -> float:
    """Appends per second of CPU time for ``count`` buffered appends, each received by a
    subscriber and followed by building the context."""
    manager = SessionManager.create(directory, directory / "sessions", durability=Durability.NONE)
    received: list[object] = []
    manager.subscribe(lambda entry: received.append(entry.id))
    try:
        # The first append writes the file and loads the entry models: not timed.
        manager.append_message(_message(0))
        manager.build_session_context()
        cpu = time.process_time()
        for n in range(1, count + 1):
            manager.append_message(_message(n))
            manager.build_session_context()
        cpu = time.process_time() - cpu
    finally:
        manager.close()
    assert len(received) == count + 1
    return count / cpu


def _typical_lines(directory: Path, count: int) -> list[bytes]:
    """The bytes the session writes for ``count`` messages, for the raw loop to write."""
    with SessionManager.in_memory(directory) as manager:
        for n in range(count):
            manager.append_message(_message(n))
        return [
            codec.dumps_line(entry)
            for entry in map(manager.get_entry_json, manager.get_branch_ids())
        ]


def _summary(values: Sequence[float], digits: int) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{mid:9.{digits}f} ({low:.{digits}f} to {high:.{digits}f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durable", type=int, default=300, help="durable appends per round")
    parser.add_argument("--chunk", type=int, default=1, help="appends per interleaved chunk")
    parser.add_argument("--buffered", type=int, default=100_000, help="buffered appends")
    parser.add_argument(
        "--read", type=int, default=20_000, help="buffered appends read back as the host does"
    )
    parser.add_argument("--rounds", type=int, default=15)
    args = parse_args(parser, durable=20, buffered=2000, read=500, rounds=2)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as name:
        directory = Path(name)
        lines = _typical_lines(directory, args.durable + 1)
        durable = [durable_round(directory, lines, args.chunk) for _ in range(args.rounds)]
        buffered = [buffered_round(directory, args.buffered) for _ in range(args.rounds)]
        read = [read_round(directory, args.read) for _ in range(args.rounds)]
    appended = len(lines) - 1
    print(f"{args.rounds} rounds, appends per second: median (lowest to highest round)")
    rows = {
        "raw write + fdatasync": ([appended / raw for raw, _ in durable], 0),
        "session, fsync": ([appended / ours for _, ours in durable], 0),
        "session ÷ raw, durable": ([raw / ours for raw, ours in durable], 2),
        "session, buffered, wall": ([wall for wall, _ in buffered], 0),
        "session, buffered, CPU": ([cpu for _, cpu in buffered], 0),
        "  and read back, CPU": (read, 0),
    }
    for label, (values, digits) in rows.items():
        print(f"  {label:24} {_summary(values, digits)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
