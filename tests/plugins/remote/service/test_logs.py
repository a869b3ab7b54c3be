"""The service's log: one JSON object a line, requests by method, path, status, size and
duration only; the requests answered within a short interval are written together."""

import asyncio
import io
import json
import logging
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from ctxmodes_remote.service.logs import (
    REQUESTS_WRITTEN_EVERY_S,
    AccessLogger,
    JsonFormatter,
    configure,
    write_pending_requests,
)


@pytest.fixture
def access_log(request):
    """A logger of the test's own writing JSON lines to ``stream``; ``writes`` holds each
    record as it is written."""
    stream = io.StringIO()
    writes = []
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.emit = lambda record, emit=handler.emit: (writes.append(record), emit(record))
    logger = logging.getLogger(f"ctxmodes.test-access.{request.node.name}")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield SimpleNamespace(logger=logger, stream=stream, writes=writes)
    logger.removeHandler(handler)


def test_requests_answered_close_together_are_one_write_of_a_line_each(access_log):
    logger, stream, writes = access_log.logger, access_log.stream, access_log.writes

    async def answer(paths):
        # Two connections' loggers, as aiohttp makes one per connection.
        loggers = [AccessLogger(logger, ""), AccessLogger(logger, "")]
        before = len(writes)
        for n, path in enumerate(paths):
            request = SimpleNamespace(method="POST", path=path, headers={"Authorization": "x"})
            response = SimpleNamespace(status=200 + n, body_length=10 * n)
            loggers[n % 2].log(request, response, 0.001234567)
        await asyncio.sleep(0)
        assert len(writes) == before  # not at the end of the turn: others may follow
        await asyncio.sleep(REQUESTS_WRITTEN_EVERY_S * 3)
        assert len(writes) == before + 1

    asyncio.run(answer(["/a", "/b", "/c"]))
    asyncio.run(answer(["/d"]))
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


def test_requests_of_a_loop_that_ended_before_it_wrote_are_written_by_the_next(access_log):
    logger = access_log.logger

    def log(path):
        request = SimpleNamespace(method="GET", path=path, headers={})
        AccessLogger(logger, "").log(request, SimpleNamespace(status=200, body_length=0), 0.0)

    async def answer(path):
        log(path)
        await asyncio.sleep(REQUESTS_WRITTEN_EVERY_S * 3)

    stopped = asyncio.new_event_loop()
    # A loop stopped and closed in the turn that answered: its write never runs.
    stopped.call_soon(lambda: (log("/before-restart"), stopped.stop()))
    stopped.run_forever()
    stopped.close()
    asyncio.run(answer("/after-restart"))
    paths = [json.loads(line)["path"] for line in access_log.stream.getvalue().splitlines()]
    assert paths == ["/before-restart", "/after-restart"]


def test_a_stopping_server_writes_the_requests_still_waiting(access_log):
    logger, stream = access_log.logger, access_log.stream

    async def answer():
        request = SimpleNamespace(method="GET", path="/last", headers={})
        AccessLogger(logger, "").log(request, SimpleNamespace(status=200, body_length=0), 0.0)

    asyncio.run(answer())  # the loop ends before the write is due
    assert stream.getvalue() == ""
    write_pending_requests()
    assert [json.loads(line)["path"] for line in stream.getvalue().splitlines()] == ["/last"]


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
