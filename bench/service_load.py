"""Load benchmark of a small team deployment: two ``ctxmodes serve`` processes sharing one
Postgres, each behind TLS on loopback, with a scripted upstream model.

Run: ``.venv/bin/python bench/service_load.py [--sessions 64] [--duration 10]``

``--sessions`` concurrent sessions of two accounts, spread over both processes as a load
balancer would, each mixing ``notes.write_file``, ``notes.read_file``,
``notes.search_contents`` and ``/responses`` streams for ``--duration`` seconds, every answer
opened with its account's key and checked (see :mod:`ctxmodes_remote.service.loadgen`).
Printed: operations per second, p50/p99 latency per operation, errors, isolation failures,
and the acknowledged writes that could not be read back afterwards (lost writes).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
import tempfile
from pathlib import Path

from smoke import parse_args

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.postgres_server import PostgresServer, postgres_bin
from support.serve_process import ServeProcess, create_token
from support.service_rig import make_tls

from ctxmodes_remote.service.crypto import load_or_create_keyring
from ctxmodes_remote.service.loadgen import LoadAccount, run_load, summary, verify_writes


def _account(token: str) -> LoadAccount:
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return LoadAccount(token, claims["sub"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of load")
    parser.add_argument("--processes", type=int, default=2)
    args = parse_args(parser, sessions=2, duration=1.0, processes=1)
    if postgres_bin() is None:
        print("skipped: Postgres is not installed")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server = PostgresServer()
        services: list[ServeProcess] = []
        try:
            url = server.database()
            tls = make_tls(root / "tls")
            script = root / "script.json"
            script.write_text(json.dumps({"responses": [{"text": "ok"}] * 100_000}))
            data = root / "data"
            accounts = [
                _account(create_token(data, name, "--database", url)) for name in ("a", "b")
            ]
            keyring = load_or_create_keyring(data)
            services = [
                ServeProcess(f"scripted:{script}", data, tls, root / f"{n}.log", "--database", url)
                for n in range(args.processes)
            ]
            context = tls.client_context()
            report = asyncio.run(
                run_load(
                    [service.base for service in services],
                    accounts,
                    keyring,
                    sessions=args.sessions,
                    duration_s=args.duration,
                    ssl_context=context,
                )
            )
            lost = asyncio.run(
                verify_writes(services[-1].base, accounts, keyring, report, ssl_context=context)
            )
        finally:
            for service in services:
                if service.process.poll() is None:
                    service.stop()
            server.close()
    print(
        f"{args.sessions} sessions over {args.processes} processes, one Postgres, "
        f"{args.duration:g} s"
    )
    print(summary(report))
    print(f"  lost writes: {len(lost)} of {len(report.writes)} files written")
    for problem in lost[:10]:
        print(f"    {problem}")
    return 1 if lost or report.errors or report.isolation_failures else 0


if __name__ == "__main__":
    sys.exit(main())
