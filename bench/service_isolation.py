"""Isolation between accounts in ``ctxmodes serve``: one account's latency alone and while
another account runs heavy searches, measured side by side in one run.

Run: ``nice .venv/bin/python bench/service_isolation.py [--ops N] [--storage sqlite|postgres]``

A real ``ctxmodes serve`` process (plain HTTP on loopback) holds two accounts:

* the quiet account: ``--quiet-sessions`` sessions, each calling ``notes.read_file`` and
  ``history.search_contents`` (a query found in its own small history) one after another with
  a short pause between calls, as agents at work do; ``--ops`` calls in all;
* the heavy account: ``--heavy-sessions`` sessions of each kind searching without pause,
  from a process of their own, niced (so the load generator does not take the cores from the
  service or the quiet client): ``history.search_contents`` over a history of
  ``--history-items`` items whose every item holds each 3-gram of the query but never the
  query (the blind index returns every item, and every one is opened and checked: a search's
  worst case), and ``notes.search_contents`` over 20 notes of 50 kB each with a match on the
  last line of every note.

The quiet account's calls are timed alone and while the heavy account searches, in
``--rounds`` rounds of both, alternated in ABBA order (alone then beside, beside then alone,
...) so the shared machine's own load, and its drift, falls on both phases alike; printed:
p50 and p99 of each phase over all its calls (8,000 by default, so the p99 is the 80th
slowest, not a handful), the p99 ratio over all calls (one account's heavy searches should
not raise another's p99 by more than 2x) and per round with its median, and the heavy
account's searches per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from service_capacity import Caller, Service, percentile
from smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.postgres_server import PostgresServer, postgres_bin

#: Every item of the heavy history holds each 3-gram of the query, never the query itself.
HEAVY_QUERY = "alpha beta gamma"
HEAVY_ITEM = "alpha beta and then beta gamma, item {n} of a long history; " * 8
HEAVY_NOTES = 20
HEAVY_NOTE_LINES = 1_500
#: Items a ``/responses`` call records while the heavy history is built.
ITEMS_PER_CALL = 200
#: Seconds a quiet session waits between two calls.
QUIET_PAUSE_S = 0.01


async def record_history(caller: Caller, session_id: str, items: list[str]) -> None:
    """Record ``items`` as user messages of ``session_id``, ``ITEMS_PER_CALL`` per window,
    through ``/responses`` (the way history is recorded)."""
    async with aiohttp.ClientSession() as http:
        for start in range(0, len(items), ITEMS_PER_CALL):
            metadata = {
                "session_id": session_id,
                "agent_name": "/root",
                "context_window_id": f"w{start // ITEMS_PER_CALL}",
            }
            body = {
                "input": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": text}],
                    }
                    for text in items[start : start + ITEMS_PER_CALL]
                ]
            }
            headers = {
                "Authorization": f"Bearer {caller.token}",
                "x-codex-turn-metadata": json.dumps(metadata),
            }
            async with http.post(f"{caller.base}/responses", json=body, headers=headers) as reply:
                await reply.read()
                assert reply.status == 200, reply.status


async def fill(
    quiet: Caller, heavy: Caller, quiet_sessions: int, heavy_sessions: int, items: int
) -> None:
    note = "".join(f"line {n} of a note to search through\n" for n in range(HEAVY_NOTE_LINES))
    async with aiohttp.ClientSession() as http:
        for n in range(heavy_sessions):
            for number in range(HEAVY_NOTES):
                body = {"path": f"h{number}.md", "text": heavy.seal(note + "needle\n")}
                await heavy.notes(http, f"heavy-{n}", "write_file", body, encrypted=True)
        for n in range(quiet_sessions):
            body = {"path": "q.md", "text": quiet.seal("a short note\n")}
            await quiet.notes(http, f"quiet-{n}", "write_file", body, encrypted=True)
    await record_history(heavy, "heavy-history", [HEAVY_ITEM.format(n=n) for n in range(items)])
    for n in range(quiet_sessions):
        texts = [f"quiet turn {t} of session {n}: a marker to find" for t in range(20)]
        await record_history(quiet, f"quiet-{n}", texts)


async def quiet_calls(quiet: Caller, sessions: int, total: int) -> list[float]:
    """The latencies (ms) of ``total`` calls of the quiet account's sessions."""
    latencies: list[float] = []
    per_session = max(2, total // sessions)

    async def session(http: aiohttp.ClientSession, n: int) -> None:
        for step in range(per_session):
            started = time.perf_counter()
            if step % 2:
                body = {"query": quiet.seal("marker to"), "limit": 5}
                await quiet.history(http, f"quiet-{n}", "search_contents", body)
            else:
                await quiet.notes(http, f"quiet-{n}", "read_file", {"path": "q.md"})
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(QUIET_PAUSE_S)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        # One untimed call per session opens its connection.
        await asyncio.gather(
            *(
                quiet.notes(http, f"quiet-{n}", "read_file", {"path": "q.md"})
                for n in range(sessions)
            )
        )
        await asyncio.gather(*(session(http, n) for n in range(sessions)))
    return latencies


def heavy_load(
    heavy: Caller, sessions: int, ready: Any, searching_now: Any, stop: Any, done: Any
) -> None:
    """In a process of its own (``ready`` once it runs): search as the heavy account while
    ``searching_now`` is set, until ``stop`` is; puts the number of searches of each kind
    on ``done``. Niced: the heavy account's clients would not share the service's cores in a
    deployment, and here they must not slow the service for want of a core more than the
    searches they ask for do."""
    os.nice(10)

    async def run() -> dict[str, int]:
        count = {"history": 0, "notes": 0}

        async def searching(http: aiohttp.ClientSession, n: int) -> None:
            while not stop.is_set():
                if not searching_now.is_set():
                    await asyncio.sleep(0.01)
                elif n % 2:
                    body = {"query": heavy.seal("needle"), "max_files": 100}
                    await heavy.notes(
                        http, f"heavy-{n // 2}", "search_contents", body, encrypted=True
                    )
                    count["notes"] += 1
                else:
                    body = {"query": heavy.seal(HEAVY_QUERY)}
                    await heavy.history(http, "heavy-history", "search_contents", body)
                    count["history"] += 1

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            ready.set()
            await asyncio.gather(*(searching(http, n) for n in range(sessions)))
        return count

    done.put(asyncio.run(run()))


def _row(name: str, latencies: list[float]) -> str:
    return (
        f"  {name:26} {len(latencies):>6} {percentile(latencies, 0.5):>8.2f} "
        f"{percentile(latencies, 0.99):>8.2f}"
    )


def measure(name: str, root: Path, args: argparse.Namespace, *database: str) -> None:
    """Rounds of the quiet account alone, then beside the heavy searches, alternated so the
    machine's own load falls on both alike."""
    service = Service(root / "data", root / "serve.log", *database, responses=10_000)
    spawn = multiprocessing.get_context("spawn")
    ready, searching_now, stop = spawn.Event(), spawn.Event(), spawn.Event()
    done = spawn.Queue()
    loader = None
    alone: list[list[float]] = []
    beside: list[list[float]] = []
    load_s = 0.0
    try:
        quiet = service.caller
        heavy = service.new_account("heavy")
        started = time.perf_counter()
        asyncio.run(
            fill(quiet, heavy, args.quiet_sessions, args.heavy_sessions, args.history_items)
        )
        filled_s = time.perf_counter() - started
        load_before = os.getloadavg()[0]
        loader = spawn.Process(
            target=heavy_load,
            args=(heavy, args.heavy_sessions * 2, ready, searching_now, stop, done),
        )
        loader.start()
        if not ready.wait(120):
            raise RuntimeError("the heavy account's load did not start")
        for round_number in range(args.rounds):
            # Alone first, then beside, and the other way round in the next round (ABBA):
            # a drift of the machine's own load falls on both phases alike.
            for heavy_now in (False, True) if round_number % 2 == 0 else (True, False):
                if heavy_now:
                    searching_now.set()
                    load_started = time.perf_counter()
                latencies = asyncio.run(quiet_calls(quiet, args.quiet_sessions, args.ops))
                if heavy_now:
                    searching_now.clear()
                    load_s += time.perf_counter() - load_started
                    beside.append(latencies)
                else:
                    alone.append(latencies)
        stop.set()
        searches = done.get(timeout=120)
    finally:
        stop.set()
        if loader is not None:
            loader.join(60)
        service.stop()
    print(
        f"\n{name} (set up in {filled_s:.1f} s), {args.rounds} rounds alternated, "
        f"load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after"
    )
    print(f"  {'quiet account':26} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8}")
    every_alone = [value for values in alone for value in values]
    every_beside = [value for values in beside for value in values]
    print(_row("alone", every_alone))
    print(_row("beside heavy searches", every_beside))
    ratio = percentile(every_beside, 0.99) / percentile(every_alone, 0.99)
    rounds = [percentile(b, 0.99) / percentile(a, 0.99) for a, b in zip(alone, beside, strict=True)]
    print(
        f"  p99 ratio {ratio:.2f}x over all calls (rounds: "
        f"{', '.join(f'{r:.2f}x' for r in rounds)}; median {statistics.median(rounds):.2f}x), "
        f"p50 ratio {percentile(every_beside, 0.5) / percentile(every_alone, 0.5):.2f}x"
    )
    print(
        f"  heavy account, {args.heavy_sessions} sessions of each: "
        f"{searches['history'] / load_s:.1f} history searches/s "
        f"({args.history_items} candidates each), "
        f"{searches['notes'] / load_s:.1f} notes searches/s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=2000, help="quiet calls per phase")
    parser.add_argument(
        "--rounds", type=int, default=4, help="of each phase, alternated (ABBA order)"
    )
    parser.add_argument("--quiet-sessions", type=int, default=4)
    parser.add_argument("--heavy-sessions", type=int, default=4, help="of each search kind")
    parser.add_argument("--history-items", type=int, default=2000, help="in the heavy history")
    parser.add_argument(
        "--storage", choices=("sqlite", "postgres", "both"), default="both", help="which storage"
    )
    args = parse_args(
        parser, ops=20, rounds=1, quiet_sessions=2, heavy_sessions=1, history_items=50
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.storage in ("sqlite", "both"):
            (root / "sqlite").mkdir()
            measure("SQLite", root / "sqlite", args)
        if args.storage in ("postgres", "both"):
            if postgres_bin() is None:
                print("\nPostgres skipped: not installed")
                return 0
            server = PostgresServer()
            try:
                (root / "postgres").mkdir()
                measure("Postgres", root / "postgres", args, "--database", server.database())
            finally:
                server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
