"""Benchmark of ``ctxmodes serve``: alpha throughput and latency under concurrent sessions,
history search over 100 MB of recorded history, and the latency the service adds in front of
a model's ``/responses`` stream.

Run: ``.venv/bin/python bench/service.py [--ops N] [--history-mb M]``

* Throughput: for 1, 8 and 32 concurrent sessions, each session alternates
  ``notes.write_file`` and ``history.search_contents`` (both with encrypted arguments, as
  Codex sends them) over HTTP on loopback until ``--ops`` calls are done in all; operations
  per second and p50/p99 latency per operation. Plain HTTP: TLS is the listener's cost, not
  the service's.
* Search: one session whose recorded history holds ``--history-mb`` MB (100 windows of
  1,000-character items, recorded as ``/responses`` would), in SQLite and in a throwaway
  Postgres (``--postgres-mb``, 0 to skip); then, as after a restart, ``history.search_contents``
  through the engine (decrypting the query, finding candidates through the blind index and
  checking each after decrypting it, encrypting the result), side by side with the first
  call that reads the whole session (``list_items``, which is what the first search cost
  before searching moved into the database).
* ``/responses``: time to the first output-text delta through the service, against the same
  scripted upstream called directly, once with no upstream delay (the service's own cost)
  and once with the upstream answering after 20 ms, as a model does; side by side, as ratios.
  A bare aiohttp handler in front of the same upstream (body read, model called on a thread,
  deltas forwarded, nothing else) is measured alongside: the floor of any HTTP front whose
  model blocks a thread. The 20 ms case runs twice: with the client in this process, and in
  a process of its own (``sse_client.py``), as a real client is.
* ``/responses`` as a team deploys it: the model served over HTTP in a process of its own
  (``loopback_servers.py``), a real ``ctxmodes serve`` reaching it through the real transport, and
  the client in a third process; the first text delta read from the model directly and
  through the service, with the model answering at once and after 20 ms; beside them the
  barest aiohttp proxy in front of the same model (what any HTTP front costs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from sizes import best
from smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.serve_process import CTXMODES, LISTENING, upstream_endpoint

from ctxmodes.abort import AbortController
from ctxmodes.providers.base import ModelRequest, StreamEvent, TextDelta
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.models import TextContent, UserMessage
from ctxmodes_remote.service.accounts import create_token
from ctxmodes_remote.service.app import CODEX_PATH, ServiceApp
from ctxmodes_remote.service.crypto import KeyRing
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.sqlite_storage import SqliteStorage
from ctxmodes_remote.service.storage import Account, RecordedItem, Storage, open_storage

ENCRYPTED = {"x-openai-encrypted-tool-arguments": "true"}


class DelayedProvider(ScriptedProvider):
    """The scripted model answering after a fixed delay, as a real model's first token."""

    def __init__(self, script: Script, delay_s: float) -> None:
        super().__init__(script)
        self._delay_s = delay_s

    def stream(self, request: ModelRequest, signal: Any) -> Iterator[StreamEvent]:
        time.sleep(self._delay_s)
        return super().stream(request, signal)


def _engine(directory: Path) -> tuple[ServiceEngine, str, Account]:
    storage = SqliteStorage.in_directory(directory)
    engine = ServiceEngine(storage, KeyRing([b"b" * 32]))
    issued = create_token(storage, "bench")
    return engine, issued.token, issued.account


async def _listen(runner: web.AppRunner) -> str:
    """Start ``runner`` on a loopback port the OS chooses; its base URL."""
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return f"http://127.0.0.1:{runner.addresses[0][1]}"


async def _serve(engine: ServiceEngine, provider: ScriptedProvider) -> tuple[web.AppRunner, str]:
    runner = ServiceApp(engine, provider).runner(access_log=None)
    return runner, await _listen(runner) + CODEX_PATH


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# -- throughput ------------------------------------------------------------------------------


async def throughput(sessions: int, total_ops: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        engine, token, account = _engine(Path(tmp))
        account_id = account.account_id
        provider = ScriptedProvider(Script())
        runner, base = await _serve(engine, provider)
        headers = {"Authorization": f"Bearer {token}", **ENCRYPTED}
        latencies: dict[str, list[float]] = {"write_file": [], "search_contents": []}
        per_session = max(2, total_ops // sessions)

        async def session(http: aiohttp.ClientSession, number: int) -> None:
            context = {"session_id": f"s{number}", "current_agent_name": "/root"}
            for step in range(per_session):
                if step % 2 == 0:
                    text = engine.keyring.encrypt(account_id, f"step {step} of {number}".encode())
                    url, body = (
                        f"{base}/alpha/notes/v2/write_file",
                        {
                            "path": f"n{step % 10}.md",
                            "text": text,
                        },
                    )
                    kind = "write_file"
                else:
                    query = engine.keyring.encrypt(account_id, b"step")
                    url, body = f"{base}/alpha/history/v2/search_contents", {"query": query}
                    kind = "search_contents"
                start = time.perf_counter()
                async with http.post(url, json={**body, "context": context}, headers=headers) as r:
                    await r.read()
                    assert r.status == 200
                latencies[kind].append((time.perf_counter() - start) * 1000)

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
            start = time.perf_counter()
            await asyncio.gather(*(session(http, n) for n in range(sessions)))
            elapsed = time.perf_counter() - start
        await runner.cleanup()
    done = sum(len(values) for values in latencies.values())
    figures = {"ops/s": done / elapsed}
    for kind, values in latencies.items():
        figures[f"{kind} p50 ms"] = statistics.median(values)
        figures[f"{kind} p99 ms"] = _percentile(values, 0.99)
    return figures


# -- search over recorded history -------------------------------------------------------------


def _text(rng: random.Random, chars: int) -> str:
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(400)]
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(words)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:chars]


def _postgres_server() -> Any:
    """The tests' throwaway Postgres server, or ``None`` where Postgres is not installed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.postgres_server import PostgresServer, postgres_bin

    return PostgresServer() if postgres_bin() is not None else None


def search_history(megabytes: int, open_store: Callable[[], Storage]) -> dict[str, float]:
    """Search figures over one ``megabytes`` session in the storage ``open_store`` opens."""
    rng = random.Random(7)
    pool = [_text(rng, 1000) for _ in range(500)]
    items_per_window = megabytes * 10
    keys = KeyRing([b"b" * 32])
    storage = open_store()
    engine = ServiceEngine(storage, keys)
    account = create_token(storage, "bench").account
    start = time.perf_counter()
    for window in range(100):
        items = [
            RecordedItem(
                f"w{window:03d}",
                f"i{window}-{n}",
                "user" if n % 3 == 0 else "assistant",
                pool[(window * 31 + n) % len(pool)]
                + (" FRESHMARK" if window == 99 and n == 5 else ""),
            )
            for n in range(items_per_window)
        ]
        engine.record(account, "big", "/root", items)
    recorded_s = time.perf_counter() - start
    context = {"session_id": "big", "current_agent_name": "/root"}

    def call(target: ServiceEngine, operation: str, **arguments: Any) -> None:
        if "query" in arguments:
            arguments["query"] = keys.encrypt(account.account_id, arguments["query"])
        target.alpha(
            account,
            "history",
            operation,
            {**arguments, "context": context},
            encrypted_arguments=True,
        )

    def restarted() -> ServiceEngine:
        return ServiceEngine(open_store(), keys)

    # A restarted service: nothing of the session in memory.
    searcher = restarted()
    start = time.perf_counter()
    call(searcher, "search_contents", query=b"NO-SUCH-TEXT-ANYWHERE")
    cold_search_ms = (time.perf_counter() - start) * 1000
    # What the first search cost before it ran in the database: reading the whole session.
    loader = restarted()
    start = time.perf_counter()
    call(loader, "list_items", limit=1)
    cold_load_ms = (time.perf_counter() - start) * 1000
    figures = {
        "record (s)": recorded_s,
        "first search after restart (database)": cold_search_ms,
        "first list_items after restart (reads all)": cold_load_ms,
        "search, no match": best(
            lambda: call(searcher, "search_contents", query=b"NO-SUCH-TEXT-ANYWHERE")
        ),
        "search, match in newest window, recent_first": best(
            lambda: call(searcher, "search_contents", query=b"FRESHMARK", recent_first=True)
        ),
        "search, common word, limit 10": best(
            lambda: call(searcher, "search_contents", query=pool[0][:6].encode())
        ),
    }
    for target in (searcher, loader, engine):
        target.close()
    return figures


# -- time to first byte -------------------------------------------------------------------------


_HI = ModelRequest(
    system_prompt="", messages=[UserMessage(content=[TextContent(text="hi")], timestamp=1)]
)


def _direct_ttfb(provider: ScriptedProvider) -> float:
    start = time.perf_counter()
    for event in provider.stream(_HI, AbortController().signal):
        if isinstance(event, TextDelta):
            return (time.perf_counter() - start) * 1000
    raise AssertionError("no text")


async def _serve_bare(provider: ScriptedProvider) -> tuple[web.AppRunner, str]:
    """The least an HTTP front with a blocking upstream does: an aiohttp handler that reads
    the body, calls the model on a thread and forwards each text delta to the client as one
    server-sent event (no token, no history, no request conversion, no encryption)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        loop = asyncio.get_running_loop()
        deltas: asyncio.Queue[str | None] = asyncio.Queue()

        def produce() -> None:
            try:
                for event in provider.stream(_HI, AbortController().signal):
                    if isinstance(event, TextDelta):
                        loop.call_soon_threadsafe(deltas.put_nowait, event.delta)
            finally:
                loop.call_soon_threadsafe(deltas.put_nowait, None)

        produced = loop.run_in_executor(None, produce)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        while (delta := await deltas.get()) is not None:
            event = {"type": "response.output_text.delta", "delta": delta}
            await response.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        await produced
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/responses", answer)
    runner = web.AppRunner(app, access_log=None)
    return runner, await _listen(runner)


_HI_BODY = {
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    ]
}


class _Client:
    """Posts ``/responses`` bodies and times the first text delta: in this process, or in a
    process of its own (``sse_client.py``) as a real client is, so that nothing of the
    client's runs in the service's process."""

    def __init__(self, own_process: bool) -> None:
        self._own_process = own_process
        self._http: aiohttp.ClientSession | None = None
        self._child: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> _Client:
        if self._own_process:
            self._child = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                "from sse_client import main; main()",
                cwd=Path(__file__).parent,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
        else:
            self._http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.close()
        if self._child is not None:
            assert self._child.stdin is not None
            self._child.stdin.close()
            await self._child.wait()

    async def first_delta(self, url: str, headers: dict[str, str]) -> float:
        """Milliseconds from sending the body to reading the first text delta."""
        if self._http is not None:
            start = time.perf_counter()
            async with self._http.post(url, json=_HI_BODY, headers=headers) as reply:
                async for line in reply.content:
                    if line.startswith(b"data: ") and b"output_text.delta" in line:
                        elapsed = (time.perf_counter() - start) * 1000
                        await reply.read()
                        return elapsed
            raise AssertionError("no text delta")
        child = self._child
        assert child is not None
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write(json.dumps([url, headers, _HI_BODY]).encode() + b"\n")
        await child.stdin.drain()
        elapsed = float((await child.stdout.readline()).decode())
        assert elapsed >= 0, "no text delta"
        return elapsed


async def ttfb(delay_s: float, runs: int, *, client_process: bool = False) -> dict[str, float]:
    script = Script.model_validate({"responses": [{"text": "hello there"}] * (runs * 3 + 4)})
    provider = DelayedProvider(script, delay_s)
    with tempfile.TemporaryDirectory() as tmp:
        engine, token, _ = _engine(Path(tmp))
        runner, base = await _serve(engine, provider)
        bare_runner, bare_base = await _serve_bare(provider)
        metadata = json.dumps({"session_id": "t", "agent_name": "/root", "context_window_id": "w"})
        headers = {"Authorization": f"Bearer {token}", "x-codex-turn-metadata": metadata}
        through: list[float] = []
        bare: list[float] = []
        direct: list[float] = []
        async with _Client(client_process) as client:
            # One untimed call each: a new process's first request pays for its imports.
            await client.first_delta(f"{base}/responses", headers)
            await client.first_delta(f"{bare_base}/responses", {})
            # Alternated run by run, so the machine's own load falls on all alike.
            for _ in range(runs):
                through.append(await client.first_delta(f"{base}/responses", headers))
                bare.append(await client.first_delta(f"{bare_base}/responses", {}))
                direct.append(await asyncio.to_thread(_direct_ttfb, provider))
        await runner.cleanup()
        await bare_runner.cleanup()
    ratios = sorted(t / max(d, 1e-6) for t, d in zip(through, direct, strict=True))
    return {
        "upstream alone (ms, median)": statistics.median(direct),
        "through the service (ms, median)": statistics.median(through),
        "through a bare handler (ms, median)": statistics.median(bare),
        "ratio": statistics.median(through) / max(statistics.median(direct), 1e-6),
        "ratio of runs, 10th percentile": ratios[len(ratios) // 10],
        "ratio of runs, 90th percentile": ratios[len(ratios) * 9 // 10],
        "ratio, bare handler": statistics.median(bare) / max(statistics.median(direct), 1e-6),
    }


async def _start(*command: str, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *command,
        cwd=Path(__file__).parent,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _loopback(server: str, *arguments: str) -> asyncio.subprocess.Process:
    """One of :mod:`loopback_servers` in a process of its own."""
    code = f"from loopback_servers import {server}; {server}()"
    return await _start(sys.executable, "-c", code, *arguments)


async def ttfb_over_http(delay_s: float, runs: int) -> dict[str, float]:
    """The deployment: a model served over HTTP (``loopback_servers.py``), ``ctxmodes serve`` in
    front of it reaching it through the real transport (a ``[providers.gateway]`` endpoint of
    the configuration), and the client, each a process of its own; the first text delta read
    from the model directly, through the service and through the barest aiohttp proxy,
    alternated run by run."""
    model = await _loopback("model_main", str(delay_s))
    port = int(await _first_line(model))
    model_url = f"http://127.0.0.1:{port}/v1/responses"
    proxy = await _loopback("proxy_main", model_url)
    proxy_url = f"http://127.0.0.1:{int(await _first_line(proxy))}/responses"
    ctxmodes = str(CTXMODES)
    service: asyncio.subprocess.Process | None = None
    times: dict[str, list[float]] = {"direct": [], "service": [], "proxy": []}
    with tempfile.TemporaryDirectory() as tmp:
        upstream = upstream_endpoint(Path(tmp), "openai-responses", f"http://127.0.0.1:{port}/v1")
        env = {**os.environ, "CTXMODES_CONFIG_DIR": tmp}
        data = str(Path(tmp) / "data")
        try:
            made = await _start(ctxmodes, "serve", "token", "create", "b", "--data", data, env=env)
            token = (await made.communicate())[0].decode().strip()
            service = await _start(
                ctxmodes, "serve", "--upstream", upstream, "--data", data, "--port", "0", env=env
            )
            listening = LISTENING.search(await _first_line(service))
            assert listening is not None, "ctxmodes serve did not start"
            metadata = {"session_id": "t", "agent_name": "/root", "context_window_id": "w"}
            headers = {
                "Authorization": f"Bearer {token}",
                "x-codex-turn-metadata": json.dumps(metadata),
            }
            targets = [
                ("service", f"{listening.group(1)}/responses", headers),
                ("direct", model_url, {}),
                ("proxy", proxy_url, {}),
            ]
            async with _Client(own_process=True) as client:
                for _, url, sent in targets * 2:  # untimed: imports and connections
                    await client.first_delta(url, sent)
                for run in range(runs):
                    for name, url, sent in targets[run % 3 :] + targets[: run % 3]:
                        times[name].append(await client.first_delta(url, sent))
        finally:
            for process in (service, proxy, model):
                if process is not None and process.returncode is None:
                    process.terminate()
                    await process.wait()
    direct, through, bare = (statistics.median(times[n]) for n in ("direct", "service", "proxy"))
    return {
        "model alone, over HTTP (ms, median)": direct,
        "through the service (ms, median)": through,
        "through a bare aiohttp proxy (ms)": bare,
        "added by the service (ms)": through - direct,
        "added by the bare proxy (ms)": bare - direct,
        "ratio": through / direct,
        "ratio, bare proxy": bare / direct,
    }


async def _first_line(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    return (await process.stdout.readline()).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=2000, help="alpha calls per concurrency level")
    parser.add_argument("--history-mb", type=int, default=100)
    parser.add_argument("--ttfb-runs", type=int, default=30)
    # Recording is slower into Postgres (its GIN index of the blind-index tokens), hence a
    # smaller default.
    parser.add_argument(
        "--postgres-mb", type=int, default=20, help="history size on Postgres (0: skip it)"
    )
    parser.add_argument(
        "--parts",
        default="throughput,search,ttfb",
        help="which parts to run, comma-separated (throughput, search, ttfb)",
    )
    args = parse_args(parser, ops=20, history_mb=1, ttfb_runs=2, postgres_mb=1)
    parts = set(args.parts.split(","))
    if "throughput" in parts:
        alpha_throughput(args.ops)
    if "search" in parts:
        history_search(args.history_mb, args.postgres_mb)
    if "ttfb" in parts:
        first_token(args.ttfb_runs)


def alpha_throughput(ops: int) -> None:
    print("alpha operations over HTTP on loopback (notes.write_file + history.search_contents)")
    print(
        f"{'sessions':>8} {'ops/s':>9} {'write p50':>10} {'write p99':>10} "
        f"{'search p50':>11} {'search p99':>11}"
    )
    for sessions in (1, 8, 32):
        f = asyncio.run(throughput(sessions, ops))
        print(
            f"{sessions:>8} {f['ops/s']:>9.0f} {f['write_file p50 ms']:>8.2f}ms "
            f"{f['write_file p99 ms']:>8.2f}ms {f['search_contents p50 ms']:>9.2f}ms "
            f"{f['search_contents p99 ms']:>9.2f}ms"
        )


def history_search(history_mb: int, postgres_mb: int) -> None:
    print("\nhistory.search_contents over a large recorded history (engine)")
    with tempfile.TemporaryDirectory() as tmp:
        stores: dict[str, tuple[int, Callable[[], Storage]]] = {
            "SQLite": (history_mb, lambda: SqliteStorage.in_directory(Path(tmp)))
        }
        server = _postgres_server() if postgres_mb else None
        if server is not None:
            url = server.database()
            stores["Postgres"] = (postgres_mb, lambda: open_storage(Path(tmp), url))
        elif postgres_mb:
            print("  (Postgres skipped: not installed)")
        try:
            for backend, (megabytes, open_store) in stores.items():
                print(f"  {backend}, {megabytes} MB:")
                for name, value in search_history(megabytes, open_store).items():
                    unit = "" if name.endswith("(s)") else " ms"
                    print(f"    {name:46} {value:9.2f}{unit}")
        finally:
            if server is not None:
                server.close()


def first_token(runs: int) -> None:
    print("\n/responses: time to the first text delta")
    for delay, client_process in ((0.0, False), (0.020, False), (0.020, True)):
        figures = asyncio.run(ttfb(delay, runs, client_process=client_process))
        where = "its own process" if client_process else "the same process"
        print(f"  upstream delay {delay * 1000:.0f} ms, client in {where}:")
        for name, value in figures.items():
            suffix = "x" if name.startswith("ratio") else ""
            print(f"    {name:36} {value:9.3f}{suffix}")
    for delay in (0.0, 0.020):
        figures = asyncio.run(ttfb_over_http(delay, runs))
        print(
            f"  a model over HTTP answering after {delay * 1000:.0f} ms, each a process of its own:"
        )
        for name, value in figures.items():
            suffix = "x" if name.startswith("ratio") else ""
            print(f"    {name:36} {value:9.3f}{suffix}")


if __name__ == "__main__":
    main()
