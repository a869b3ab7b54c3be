"""Servers on loopback for the benchmarks, each started in a process of its own (``python -c
"from loopback_servers import …; …"``) and printing its port: not benchmarks themselves.

* :func:`model_main` answers every POST to ``/v1/responses`` with an OpenAI Responses stream
  of a short text, after the delay given as its argument (a model preparing its first
  token), as a team's model server does (``bench/service.py``).
* :func:`proxy_main` forwards every POST to the model at the address given as its argument
  and streams the answer back as it comes (aiohttp's server and client, a kept connection,
  nothing else): the least any HTTP front of a model costs, to set the service beside.
* :func:`echo_main` answers every POST to ``/echo`` with its JSON body: the smallest useful
  aiohttp service, the HTTP anchor of ``bench/service_capacity.py``.
* :func:`insert_main` inserts every POST to ``/insert``'s body as one row of the Postgres
  database given as its argument, over as many kept connections as its second argument
  says, on the event loop the service runs on, and answers the row's number: the least a
  note write through aiohttp and psycopg can cost, the floor under the service's writes in
  ``bench/service_capacity.py``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import aiohttp
import orjson
import psycopg
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.wire_server import text_stream

from ctxmodes_remote.service.server import loop_factory

FRAMES = text_stream("openai-responses", "hello there", pieces=2)


async def _listen(app: web.Application) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()


async def _model(delay_s: float) -> None:
    async def answer(request: web.Request) -> web.StreamResponse:
        await request.read()
        await asyncio.sleep(delay_s)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for frame in FRAMES:
            await response.write(frame)
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/responses", answer)
    await _listen(app)


async def _proxy(model_url: str) -> None:
    async with aiohttp.ClientSession() as http:

        async def forward(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            headers = {"Content-Type": "application/json"}
            async with http.post(model_url, data=body, headers=headers) as upstream:
                response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
            await response.write_eof()
            return response

        app = web.Application()
        app.router.add_post("/responses", forward)
        await _listen(app)


async def _echo() -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.json_response(await request.json())

    app = web.Application()
    app.router.add_post("/echo", echo)
    await _listen(app)


INSERT_TABLE = "CREATE TABLE IF NOT EXISTS floor (seq bigserial PRIMARY KEY, value bytea)"


async def _insert(url: str, connections: int) -> None:
    # Idle cursors, each on a connection of its own: a call waits for one when all are busy.
    kept: asyncio.Queue[psycopg.AsyncCursor[tuple[int]]] = asyncio.Queue()
    for _ in range(connections):
        connection = await psycopg.AsyncConnection.connect(url, autocommit=True)
        kept.put_nowait(connection.cursor())
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as setup:
        await setup.execute(INSERT_TABLE)

    async def insert(request: web.Request) -> web.Response:
        body = await request.read()
        orjson.loads(body)
        cursor = await kept.get()
        try:
            await cursor.execute(
                "INSERT INTO floor (value) VALUES (%s) RETURNING seq", (body,), prepare=True
            )
            rows = await cursor.fetchall()
        finally:
            kept.put_nowait(cursor)
        return web.Response(body=orjson.dumps({"seq": rows[0][0]}), content_type="application/json")

    app = web.Application()
    app.router.add_post("/insert", insert)
    await _listen(app)


def model_main() -> None:
    asyncio.run(_model(float(sys.argv[1])))


def proxy_main() -> None:
    asyncio.run(_proxy(sys.argv[1]))


def echo_main() -> None:
    asyncio.run(_echo())


def insert_main() -> None:
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(_insert(sys.argv[1], int(sys.argv[2])))
