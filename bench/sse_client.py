"""The ``/responses`` client of ``bench/service.py`` in a process of its own, as a real client
(Codex) is. Started by the benchmark (``main``), not a benchmark itself: for each line read
from standard input (a JSON array: the URL, the headers, the body) it posts the body and
prints the milliseconds until the first output-text delta."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    async with aiohttp.ClientSession() as http:
        while line := await commands.readline():
            url, headers, body = json.loads(line)
            start = time.perf_counter()
            elapsed = -1.0
            async with http.post(url, json=body, headers=headers) as reply:
                async for received in reply.content:
                    if received.startswith(b"data: ") and b"output_text.delta" in received:
                        elapsed = (time.perf_counter() - start) * 1000
                        break
                await reply.read()
            print(f"{elapsed:.4f}", flush=True)


def main() -> None:
    asyncio.run(_serve())
