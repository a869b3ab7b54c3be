"""The service's log: one JSON object a line, requests by method, path, status, size and
duration only; the requests answered in one turn of the event loop are written together."""

import asyncio
import io
import json
import logging
from datetime import UTC, datetime
from types import SimpleNamespace

from ctxmodes_remote.service.logs import AccessLogger, JsonFormatter, configure


def test_requests_answered_in_one_turn_are_one_write_of_a_line_each():
    stream = io.StringIO()
    writes = []
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.emit = lambda record, emit=handler.emit: (writes.append(record), emit(record))
    logger = logging.getLogger("ctxmodes.test-access")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    async def answer(paths):
        # Two connections' loggers, as aiohttp makes one per connection.
        loggers = [AccessLogger(logger, ""), AccessLogger(logger, "")]
        before = len(writes)
        for n, path in enumerate(paths):
            request = SimpleNamespace(method="POST", path=path, headers={"Authorization": "x"})
            response = SimpleNamespace(status=200 + n, body_length=10 * n)
            loggers[n % 2].log(request, response, 0.001234567)
        assert len(writes) == before  # not before the turn ends
        await asyncio.sleep(0)
        assert len(writes) == before + 1

    try:
        asyncio.run(answer(["/a", "/b", "/c"]))
        asyncio.run(answer(["/d"]))
    finally:
        logger.removeHandler(handler)
    assert len(writes) == 2
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["path"], line["status"], line["bytes"]) for line in lines] == [
        ("/a", 200, 0),
        ("/b", 201, 10),
        ("/c", 202, 20),
        ("/d", 200, 0),
    ]
    for line in lines:
        assert set(line) == {
            "time", "level", "logger", "message", "method", "path", "status", "bytes", "seconds",
        }  # fmt: skip
        assert (line["level"], line["message"], line["seconds"]) == ("info", "request", 0.001235)
        logged = datetime.fromisoformat(line["time"])
        assert logged.tzinfo == UTC
        assert abs((datetime.now(UTC) - logged).total_seconds()) < 60


def test_the_postgres_pools_log_failures_but_not_every_connection_lent(capsys):
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    pool = logging.getLogger("psycopg.pool")
    try:
        configure()
        pool.info("connection requested from %r", "pool-1")
        pool.warning("error connecting in %r: connection refused", "pool-1")
        logging.getLogger("ctxmodes.serve").info("keys reloaded")
    finally:
        root.handlers[:], pool.level = saved[0], logging.NOTSET
        root.setLevel(saved[1])
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["logger"], line["level"]) for line in lines] == [
        ("psycopg.pool", "warning"),
        ("ctxmodes.serve", "info"),
    ]
