"""Capacity of ``ctxmodes serve`` against its anchor: how close the service comes to the rate
of its own database and of the HTTP stack it runs on, measured side by side in one run.

Run: ``nice .venv/bin/python bench/service_capacity.py [--ops N] [--storage sqlite|postgres]``

For each storage (SQLite; Postgres on a throwaway server when it is installed) and for 1, 8
and 32 concurrent sessions:

* the anchor is the lesser of two rates at that concurrency: the storage's raw rate (pgbench's
  single-row inserts, one transaction each, ``synchronous_commit`` on; for SQLite a loop of
  single-row inserts, each committed in WAL mode with ``synchronous=FULL``), and a trivial
  aiohttp handler echoing a JSON body, in a process of its own on loopback;
* on Postgres, beside the anchor, the floor under a note write on this stack: an aiohttp
  handler on the service's event loop that inserts each call's body as one row through
  psycopg and answers its number, nothing more (no token, no keys, no notes), with as many
  connections as a service process; its ratio is the most any service built on them can
  reach here;
* ctxmodes is a real ``ctxmodes serve`` process (plain HTTP on loopback: TLS is the listener's
  cost, not the service's) answering ``notes.write_file``, ``notes.read_file`` and
  ``notes.search_contents`` with encrypted arguments, as Codex sends them, each session in a
  session of its own; ``--ops`` calls of each kind per concurrency level;
* every request, to the service and to the echo handler, is made before the clock starts
  (its JSON, and the service's sealed values, which Codex replays rather than makes): the
  load generator shares the cores with what it measures, and spends as little on a call to
  either;
* on Postgres each service process has ``--connections`` database connections (default
  32, one per session at the highest concurrency), and the same is measured with several
  ``ctxmodes serve`` processes on the one database
  (``--processes``, default 1 and 2), each session placed on one of them as a load balancer
  would place it.

* ``--baseline SRC`` measures, beside this checkout's service, the one in the source tree
  ``SRC`` (its ``core`` and ``plugins``, as ``git archive`` of an earlier commit lays them
  out), alternated with it at each concurrency against the same anchor: a before/after pair
  taken under the same load of the machine. With ``--rounds N`` the whole sweep runs ``N``
  times, and which of the two goes first at a concurrency changes from round to round, so
  that neither always meets the database right after the anchor's own inserts.

Isolation between accounts (one account's p99 beside another's heavy searches) is measured by
``bench/service_isolation.py``.

Printed per storage and concurrency: the anchor's parts, then per service (with
``--baseline``), number of processes and operation its rate, p50 and p99 latency, its rate as
a ratio of the anchor, and the CPU time the service processes spent per call (from
``/proc``: the service's own cost, which the machine's other load does not inflate as it
does rates).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import aiohttp
from smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.postgres_server import PostgresServer, postgres_bin
from support.serve_process import CTXMODES, LISTENING

from ctxmodes_remote.service.codex_home import account_of
from ctxmodes_remote.service.crypto import KeyRing, load_or_create_keyring

CONCURRENCY = (1, 8, 32)
#: The length of a note write's sealed text (``"note 1234 of session 7: …"``, as
#: :func:`ctxmodes_rates` writes it).
_SEALED_NOTE_CHARS = 140
ENCRYPTED = {"x-openai-encrypted-tool-arguments": "true"}
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class Rate:
    per_s: float
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    #: CPU seconds spent per call (0 when not measured): by the server (the service's
    #: processes, or the echo handler's), by the database's processes, by the client.
    cpu_s: float = 0.0
    db_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    calls: int = 0


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass(frozen=True, slots=True)
class Post:
    """One request, made before the clock starts: the load generator shares the cores with
    the server it measures, so it spends no more a call on the service (sealing, JSON) than
    on the echo handler."""

    url: str
    body: bytes
    headers: dict[str, str]


def prepared(
    clients: int, total: int, make: Callable[[int, int], Post]
) -> Callable[[aiohttp.ClientSession, int, int], Awaitable[None]]:
    """A call for :func:`_drive` that sends ``make(client, step)``, made beforehand for every
    client and step (``-1``: the untimed first call)."""
    posts = {
        (number, step): make(number, step)
        for number in range(clients)
        for step in range(-1, _per_client(clients, total))
    }

    async def call(http: aiohttp.ClientSession, number: int, step: int) -> None:
        await send(http, posts[number, step])

    return call


async def send(http: aiohttp.ClientSession, post: Post) -> None:
    async with http.post(post.url, data=post.body, headers=post.headers) as reply:
        await reply.read()
        assert reply.status == 200, reply.status


def _per_client(clients: int, total: int) -> int:
    return max(1, total // clients)


async def _drive(
    clients: int, total: int, call: Callable[[aiohttp.ClientSession, int, int], Awaitable[None]]
) -> Rate:
    """``total`` calls spread over ``clients`` concurrent clients, each one after another."""
    latencies: list[float] = []
    per_client = _per_client(clients, total)

    async def client(http: aiohttp.ClientSession, number: int) -> None:
        for step in range(per_client):
            started = time.perf_counter()
            await call(http, number, step)
            latencies.append((time.perf_counter() - started) * 1000)

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        # One untimed call per client opens its connection.
        await asyncio.gather(*(call(http, n, -1) for n in range(clients)))
        started = time.perf_counter()
        await asyncio.gather(*(client(http, n) for n in range(clients)))
        elapsed = time.perf_counter() - started
    return Rate(
        len(latencies) / elapsed,
        percentile(latencies, 0.5),
        percentile(latencies, 0.99),
        calls=len(latencies),
    )


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pids: Sequence[int]) -> dict[int, float]:
    """User and system CPU time each process has spent so far (those gone are left out)."""
    spent: dict[int, float] = {}
    for pid in pids:
        try:
            fields = _stat(pid)
        except OSError:
            continue
        spent[pid] = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    return spent


def family(parent: int) -> list[int]:
    """``parent`` and its children (a Postgres server: the postmaster and its backends)."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int(_stat(int(entry.name))[1]) == parent:
                    children.append(int(entry.name))
            except OSError:
                continue
    return [parent, *children]


def measured(
    server: Sequence[int],
    run: Callable[[], Rate],
    database: Callable[[], Sequence[int]] = list,
) -> Rate:
    """``run``'s rate, with the CPU spent on each of its calls by the processes ``server``,
    by those ``database()`` names (before and after: backends come and go), and by this
    process, the client."""

    def client() -> float:
        return sum(os.times()[:2])

    started = (cpu_seconds(server), cpu_seconds(database()), client())
    rate = run()
    ended = (cpu_seconds(server), cpu_seconds(database()), client())
    calls = max(1, rate.calls)

    def per_call(index: int) -> float:
        before, after = started[index], ended[index]
        return sum(time - before.get(pid, 0.0) for pid, time in after.items()) / calls

    return Rate(
        rate.per_s,
        rate.p50_ms,
        rate.p99_ms,
        per_call(0),
        per_call(1),
        (ended[2] - started[2]) / calls,
        rate.calls,
    )


# -- anchors ---------------------------------------------------------------------------------


def loopback_rate(
    main: str,
    arguments: Sequence[str],
    clients: int,
    total: int,
    body: Callable[[int, int], dict[str, object]],
    database: Callable[[], Sequence[int]] = list,
) -> Rate:
    """The rate of the server ``loopback_servers.<main>_main`` started with ``arguments``
    in a process of its own, sent ``body(client, step)`` at its one route ``/<main>``."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from loopback_servers import {main}_main; {main}_main()",
            *arguments,
        ],
        cwd=Path(__file__).parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/{main}"

        def post(number: int, step: int) -> Post:
            return Post(url, json.dumps(body(number, step)).encode(), _JSON)

        call = prepared(clients, total, post)
        return measured([server.pid], partial(asyncio.run, _drive(clients, total, call)), database)
    finally:
        server.terminate()
        server.wait(30)


def echo_rate(clients: int, total: int) -> Rate:
    """The HTTP anchor: the smallest useful aiohttp service."""
    return loopback_rate("echo", (), clients, total, lambda n, step: {"client": n, "step": step})


def insert_rate(server: PostgresServer, connections: int, clients: int, total: int) -> Rate:
    """The floor under the service's note writes on Postgres: aiohttp on the service's
    event loop, one row inserted per call through psycopg, nothing else; the body as big as
    a note write's."""
    url = server.database()
    try:
        return loopback_rate(
            "insert",
            (url, str(connections)),
            clients,
            total,
            lambda n, step: {
                "path": f"n{step % 10}.md",
                "text": "A" * _SEALED_NOTE_CHARS,
                "context": {"session_id": f"s{n}", "current_agent_name": "/root"},
            },
            lambda: family(server.postmaster_pid()),
        )
    finally:
        server.drop(url)


def sqlite_commit_rate(directory: Path, total: int) -> Rate:
    """Single-row inserts, each its own durable transaction (SQLite writers take turns, so
    one loop is the file's rate at any concurrency)."""
    db = sqlite3.connect(directory / "anchor.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS anchor (seq INTEGER PRIMARY KEY, value TEXT)")
    started = time.perf_counter()
    for n in range(total):
        db.execute("INSERT INTO anchor (value) VALUES (?)", (f"row {n}",))
    elapsed = time.perf_counter() - started
    db.close()
    return Rate(total / elapsed)


def pgbench_rate(server: PostgresServer, directory: Path, clients: int, total: int) -> Rate:
    url = server.database()
    subprocess.run(
        [
            str(server_bin() / "psql"),
            "-q",
            url,
            "-c",
            "CREATE TABLE anchor (seq bigserial PRIMARY KEY, value text)",
        ],
        check=True,
        capture_output=True,
    )
    script = directory / "insert.sql"
    script.write_text("INSERT INTO anchor (value) VALUES ('a row of text');\n")
    done = subprocess.run(
        [
            str(server_bin() / "pgbench"),
            "-n",
            "-f",
            str(script),
            "-c",
            str(clients),
            "-j",
            str(min(clients, 2)),
            "-t",
            str(max(1, total // clients)),
            url,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    server.drop(url)
    found = re.search(r"tps = ([0-9.]+)", done.stdout)
    assert found is not None, done.stdout
    latency = re.search(r"latency average = ([0-9.]+) ms", done.stdout)
    return Rate(float(found.group(1)), float(latency.group(1)) if latency else 0.0)


def server_bin() -> Path:
    found = postgres_bin()
    assert found is not None
    return found


# -- ctxmodes --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Caller:
    """One account's client of the service: its token and its key."""

    base: str
    token: str
    account_id: str
    keyring: KeyRing

    def seal(self, text: str) -> str:
        return self.keyring.encrypt(self.account_id, text.encode())

    def post(
        self,
        session_id: str,
        operation: str,
        body: dict[str, object],
        *,
        family: str = "notes",
        encrypted: bool = False,
    ) -> Post:
        """``<family>.<operation>`` as Codex sends it, ready to send (see :class:`Post`)."""
        headers = {
            **_JSON,
            "Authorization": f"Bearer {self.token}",
            **(ENCRYPTED if encrypted else {}),
        }
        context = {"session_id": session_id, "current_agent_name": "/root"}
        return Post(
            f"{self.base}/alpha/{family}/v2/{operation}",
            json.dumps({**body, "context": context}).encode(),
            headers,
        )

    async def notes(
        self,
        http: aiohttp.ClientSession,
        session_id: str,
        operation: str,
        body: dict[str, object],
        *,
        encrypted: bool = False,
    ) -> None:
        await send(http, self.post(session_id, operation, body, encrypted=encrypted))

    async def history(
        self, http: aiohttp.ClientSession, session_id: str, operation: str, body: dict[str, object]
    ) -> None:
        """``history.<operation>``, its ``query`` (if any) sealed as Codex sends it."""
        post = self.post(session_id, operation, body, family="history", encrypted=True)
        await send(http, post)


class Service:
    """``ctxmodes serve`` on plain HTTP: ``processes`` processes on one database, as a team
    runs them behind a load balancer."""

    def __init__(
        self,
        data: Path,
        log: Path,
        *database: str,
        processes: int = 1,
        options: Sequence[str] = (),
        responses: int = 1,
        source: Path | None = None,
    ) -> None:
        self._log = log.open("w")
        self._data = data
        self._database = database
        self._options = options
        self._env = None if source is None else source_environment(source)
        first = self._token("bench")
        self.keyring: KeyRing = load_or_create_keyring(data)
        script = data / "script.json"
        script.write_text(json.dumps({"responses": [{"text": "ok"}] * responses}))
        self.processes: list[subprocess.Popen[str]] = []
        self.bases: list[str] = []
        for _ in range(processes):
            self._start(script, log)
        self.callers = [self.account(first, base) for base in self.bases]
        self.caller = self.callers[0]

    def _start(self, script: Path, log: Path) -> None:
        process = subprocess.Popen(
            [
                str(CTXMODES),
                "serve",
                "--upstream",
                f"scripted:{script}",
                "--data",
                str(self._data),
                "--port",
                "0",
                *self._database,
                *self._options,
            ],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=self._env,
        )
        self.processes.append(process)
        assert process.stdout is not None
        found = LISTENING.search(process.stdout.readline())
        if found is None:
            self.stop()
            raise RuntimeError(f"ctxmodes serve did not start: {log.read_text()[-2000:]}")
        self.bases.append(found.group(1))

    def _token(self, name: str) -> str:
        made = subprocess.run(
            [
                str(CTXMODES),
                "serve",
                "token",
                "create",
                name,
                "--data",
                str(self._data),
                *self._database,
            ],
            capture_output=True,
            text=True,
            check=True,
            env=self._env,
        )
        return made.stdout.strip()

    def account(self, token: str, base: str | None = None) -> Caller:
        return Caller(base or self.bases[0], token, account_of(token), self.keyring)

    def new_account(self, name: str) -> Caller:
        return self.account(self._token(name))

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            process.wait(30)
        self._log.close()


def source_environment(source: Path) -> dict[str, str]:
    """The environment that runs ``ctxmodes`` from the source tree ``source`` (its packages
    ahead of this checkout's on the import path)."""
    folders = [source / "core", *sorted((source / "plugins").iterdir())]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(str(folder) for folder in folders)}


def ctxmodes_rates(
    callers: Sequence[Caller],
    clients: int,
    total: int,
    run: str,
    pids: Sequence[int] = (),
    database: Callable[[], Sequence[int]] = list,
) -> dict[str, Rate]:
    """Writes, then reads, then searches; session ``n`` talks to ``callers[n % len]``'s
    process throughout, as a load balancer would place it; the CPU per call is that of the
    processes ``pids`` and ``database()`` (see :func:`measured`)."""

    def session(number: int) -> str:
        return f"r{run}-c{clients}-s{number}"

    def caller(number: int) -> Caller:
        return callers[number % len(callers)]

    def write(number: int, step: int) -> Post:
        text = caller(number).seal(f"note {step} of session {number}: some text to find later")
        body = {"path": f"n{step % 10}.md", "text": text}
        return caller(number).post(session(number), "write_file", body, encrypted=True)

    def read(number: int, step: int) -> Post:
        return caller(number).post(session(number), "read_file", {"path": f"n{step % 10}.md"})

    def search(number: int, step: int) -> Post:
        body = {"query": caller(number).seal("text to find")}
        return caller(number).post(session(number), "search_contents", body, encrypted=True)

    def rate(make: Callable[[int, int], Post]) -> Rate:
        call = prepared(clients, total, make)
        return measured(pids, partial(asyncio.run, _drive(clients, total, call)), database)

    return {"write": rate(write), "read": rate(read), "search": rate(search)}


def measure(
    name: str,
    root: Path,
    total: int,
    raw: Callable[[int], Rate],
    database: Callable[[], Sequence[str]],
    *,
    processes: Sequence[int] = (1,),
    options: Sequence[str] = (),
    baseline: Path | None = None,
    database_pids: Callable[[], Sequence[int]] = list,
    rounds: int = 1,
    floor: Callable[[int], Rate] | None = None,
) -> None:
    """The table of one storage: per concurrency, the anchor (and ``floor(clients)``, the
    rate of a server doing the least a note write needs), then ctxmodes (and the
    ``baseline`` source tree's, first) with each number of service processes in
    ``processes`` (all started at once, the first serving alone). ``database()`` gives each
    service its storage arguments, ``database_pids()`` the database server's processes."""
    sources: dict[str, Path | None] = {"now": None}
    if baseline is not None:
        sources = {"before": baseline, **sources}
    services: dict[str, Service] = {}
    try:
        for label, source in sources.items():
            (root / label).mkdir()
            services[label] = Service(
                root / label / "data",
                root / label / "serve.log",
                *database(),
                processes=max(processes),
                options=options,
                source=source,
            )
        print(f"\n{name}")
        print(
            "CPU per call in microseconds: the server's processes (the service's; the echo "
            "handler's), the database's, the client's"
        )
        print(
            f"{'sessions':>8} {'raw/s':>8} {'echo/s':>8} {'anchor/s':>9}   {'service':7} "
            f"{'procs':>5} {'op':6} {'ops/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'ratio':>6} "
            f"{'server':>7} {'db':>5} {'client':>6}"
        )
        sweeps = [
            (turn, level, clients)
            for turn in range(rounds)
            for level, clients in enumerate(CONCURRENCY)
        ]
        for turn, level, clients in sweeps:
            if rounds > 1 and level == 0:
                print(f"round {turn + 1} of {rounds}")
            storage = raw(clients)
            echo = echo_rate(clients, total)
            anchor = min(storage.per_s, echo.per_s)
            print(
                f"{clients:>8} {'echo handler alone':>34}   {'':26} {echo.per_s:>7.0f} "
                f"{echo.p50_ms:>7.2f} {echo.p99_ms:>7.2f} {'':6} {echo.cpu_s * 1e6:>7.0f} "
                f"{'':>5} {echo.client_cpu_s * 1e6:>6.0f}"
            )
            if floor is not None:
                least = floor(clients)
                print(
                    f"{clients:>8} {'one insert a call':>34}   {'':26} {least.per_s:>7.0f} "
                    f"{least.p50_ms:>7.2f} {least.p99_ms:>7.2f} {least.per_s / anchor:>5.2f}x "
                    f"{least.cpu_s * 1e6:>7.0f} {least.db_cpu_s * 1e6:>5.0f} "
                    f"{least.client_cpu_s * 1e6:>6.0f}"
                )
            line = 0
            # Which goes first alternates, from level to level and from round to round: each
            # meets the database just after the anchor's inserts as often as the other.
            order = list(services.items())
            for label, service in order[::-1] if (level + turn) % 2 else order:
                for count in processes:
                    rates = ctxmodes_rates(
                        service.callers[:count],
                        clients,
                        total,
                        f"{count}",
                        service.pids[:count],
                        database_pids,
                    )
                    for operation, rate in rates.items():
                        lead = (
                            f"{clients:>8} {storage.per_s:>8.0f} {echo.per_s:>8.0f} {anchor:>9.0f}"
                            if line == 0
                            else " " * 35
                        )
                        line += 1
                        print(
                            f"{lead}   {label:7} {count:>5} {operation:6} {rate.per_s:>7.0f} "
                            f"{rate.p50_ms:>7.2f} {rate.p99_ms:>7.2f} "
                            f"{rate.per_s / anchor:>5.2f}x {rate.cpu_s * 1e6:>7.0f} "
                            f"{rate.db_cpu_s * 1e6:>5.0f} {rate.client_cpu_s * 1e6:>6.0f}",
                            flush=True,
                        )
    finally:
        for service in services.values():
            service.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=2000, help="calls per operation and level")
    parser.add_argument(
        "--storage", choices=("sqlite", "postgres", "both"), default="both", help="which storage"
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=max(CONCURRENCY),
        help="each Postgres service process's --database-connections (default: one per "
        "session at the highest concurrency)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a source tree (core/, plugins/) of an earlier version to measure alternated "
        "with this one",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="times the whole sweep runs, the order of --baseline and this one changing "
        "from round to round",
    )
    parser.add_argument(
        "--processes",
        type=lambda text: sorted({int(n) for n in text.split(",")}),
        default=[1, 2],
        help="numbers of service processes on the one Postgres database, comma-separated",
    )
    args = parse_args(parser, ops=32)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.storage in ("sqlite", "both"):
            (root / "sqlite").mkdir()
            measure(
                "SQLite (raw: single-row commits, WAL, synchronous=FULL)",
                root / "sqlite",
                args.ops,
                lambda clients: sqlite_commit_rate(root / "sqlite", args.ops),
                lambda: (),
                baseline=args.baseline,
                rounds=args.rounds,
            )
        if args.storage in ("postgres", "both"):
            if postgres_bin() is None:
                print("\nPostgres skipped: not installed")
                return 0
            server = PostgresServer()
            try:
                (root / "postgres").mkdir()
                measure(
                    "Postgres (raw: pgbench single-row inserts, synchronous_commit on; "
                    f"{args.connections} connections per service process)",
                    root / "postgres",
                    args.ops,
                    lambda clients: pgbench_rate(server, root, clients, args.ops),
                    lambda: ("--database", server.database()),
                    processes=args.processes,
                    options=("--database-connections", str(args.connections)),
                    baseline=args.baseline,
                    database_pids=lambda: family(server.postmaster_pid()),
                    rounds=args.rounds,
                    floor=lambda clients: insert_rate(server, args.connections, clients, args.ops),
                )
            finally:
                server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
