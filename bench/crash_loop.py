"""Kill session writers with SIGKILL at random moments and check that nothing acknowledged is lost.

A supervisor forks one writer at a time. Each writer opens the session file (taking the write
lock, terminating any torn last line), appends messages of random sizes and reports every id
on a pipe *after* ``append`` returned. The supervisor kills it after a random delay (sometimes
while it is still opening, sometimes in the middle of a large write), then starts the next one.
At the end the file must open, and every reported id must be in it.

Usage: ``.venv/bin/python bench/crash_loop.py [--kills N] [--seed S] [--durability fsync|flush]
[--file PATH] [--json]`` (POSIX only).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from smoke import parse_args

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability


def _writer(path: Path, durability: Durability, seed: int, report_fd: int) -> None:
    """Runs in the forked child until it is killed."""
    rng = random.Random(seed)
    limit = rng.randint(1, 40)
    manager = SessionManager.open(path, cwd_override="/crash", durability=durability)
    for step in range(limit):
        size = rng.choice([40, 200, 2000]) if rng.random() < 0.95 else rng.randint(64, 512) * 1024
        entry_id = manager.append_message(
            {"role": "user", "content": [{"type": "text", "text": "x" * size}], "timestamp": step}
        )
        os.write(report_fd, f"{entry_id}\n".encode())
    while True:  # wait to be killed
        time.sleep(1)


def _drain(fd: int, deadline: float | None) -> bytes:
    data = b""
    while True:
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return data
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data += chunk


def _first_line(fd: int) -> bytes:
    """What the writer reports up to its first complete line (or until it dies)."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def run(path: Path, kills: int, seed: int, durability: Durability) -> dict[str, Any]:
    """Run ``kills`` writer lifetimes against ``path``; return what was acknowledged."""
    rng = random.Random(seed)
    acknowledged: list[str] = []
    for round_number in range(kills):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(read_fd)
            try:
                _writer(path, durability, seed * 100_003 + round_number, write_fd)
            finally:
                os._exit(1)
        os.close(write_fd)
        # Some writers die while opening the file, most while appending. Every other round
        # the delay starts only once the writer acknowledged its first entry, so how much
        # gets acknowledged does not depend on how loaded the machine is.
        delay = rng.choice([0.0, rng.uniform(0, 0.004), rng.uniform(0.004, 0.03)])
        received = _first_line(read_fd) if round_number % 2 else b""
        received += _drain(read_fd, time.monotonic() + delay)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        received += _drain(read_fd, None)
        os.close(read_fd)
        acknowledged.extend(line.decode() for line in received.split(b"\n") if line)
    return {"file": str(path), "kills": kills, "acknowledged": acknowledged}


def verify(report: dict[str, Any]) -> list[str]:
    """Problems with the file after the run (empty when every acknowledged entry is there)."""
    path = Path(report["file"])
    if not report["acknowledged"] and not path.exists():
        return []
    with SessionManager.open(path, read_only=True) as manager:
        present = {entry.id for entry in manager.get_entries()}
        skipped = manager.skipped_lines
    problems = [
        f"acknowledged entry {entry_id} is missing"
        for entry_id in report["acknowledged"]
        if entry_id not in present
    ]
    problems += [
        f"unexpected skipped line: {line}" for line in skipped if line.reason != "not valid JSON"
    ]
    if len(skipped) > report["kills"]:
        problems.append(f"{len(skipped)} torn lines after {report['kills']} kills")
    with SessionManager.open(path) as manager:  # the lock of the last writer is gone
        manager.append_session_info("after the crash loop")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--durability", choices=[d.value for d in Durability][:2], default="fsync")
    parser.add_argument("--file", type=Path)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parse_args(parser, kills=10)
    with tempfile.TemporaryDirectory() as scratch:
        path = args.file or Path(scratch) / "crash.jsonl"
        started = time.perf_counter()
        report = run(path, args.kills, args.seed, Durability(args.durability))
        elapsed = time.perf_counter() - started
        problems = verify(report)
        with SessionManager.open(path, read_only=True) as manager:
            torn = len(manager.skipped_lines)
        report.update(problems=problems, torn_lines=torn, seconds=round(elapsed, 2))
        if args.json:
            print(json.dumps(report))
        else:
            print(
                f"{args.kills} kills in {elapsed:.1f}s: {len(report['acknowledged'])} acknowledged "
                f"appends, {torn} torn lines skipped, {len(problems)} problems"
            )
            for problem in problems[:20]:
                print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
