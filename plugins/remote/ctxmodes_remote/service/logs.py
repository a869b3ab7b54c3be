"""Structured logs: one JSON object per line on standard error.

Requests are logged by method, path (without its query), status, size and duration; never by
header or body, so no token, note or ciphertext reaches the log. The requests answered within
:data:`REQUESTS_WRITTEN_EVERY_S` of each other are handed to the log together, as one record
written at once (a line each, with its own time): under load a record and a write per request,
or even per turn of the event loop, cost the service more than some of its calls' own work.
:func:`write_pending_requests` writes what is still waiting (the server calls it as it stops).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from datetime import UTC, datetime
from time import time as _now
from typing import Any

import orjson
from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

#: The last second formatted, and its text (one tuple: threads log too).
_second = (-1, "")


def _iso(created: float) -> str:
    """``created`` in ISO 8601, to the millisecond, in UTC. The formatting of its second is
    kept: most lines share theirs with the line before."""
    global _second
    whole = int(created)
    second = _second
    if second[0] != whole:
        second = _second = (whole, datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S"))
    return f"{second[1]}.{int((created - whole) * 1000):03d}+00:00"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: the record's time, level, logger and message, and its
    ``fields``; a record of several requests (``requests``, see :class:`AccessLogger`) is a
    line per request, each with its own time."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _iso(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info).splitlines()[-1]
        requests = getattr(record, "requests", None)
        if isinstance(requests, list):
            return "\n".join(
                orjson.dumps({**entry, **each, "time": _iso(each["time"])}).decode()
                for each in requests
            )
        return orjson.dumps(entry).decode()


#: Seconds a request's line may wait for others to be written with: at a few thousand
#: requests a second, tens of them share a write.
REQUESTS_WRITTEN_EVERY_S = 0.01


class _Requests:
    """The requests answered since the last write, logged together
    :data:`REQUESTS_WRITTEN_EVERY_S` after the first of them."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._pending: list[dict[str, Any]] = []
        #: The loop that is to write what is pending (``None`` when nothing is).
        self._flushing_on: asyncio.AbstractEventLoop | None = None

    def add(self, entry: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        # The first request since the last write; or a loop that ended before it wrote (a
        # service stopped and started again in one process) left requests pending, written
        # with these.
        if self._flushing_on is not loop:
            loop.call_later(REQUESTS_WRITTEN_EVERY_S, self.flush)
            self._flushing_on = loop
        self._pending.append(entry)

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        self._flushing_on = None
        logger = self._logger
        if pending and logger.isEnabledFor(logging.INFO):
            # The record made directly: ``Logger.info`` would also walk the stack for the
            # caller's file and line, which the lines do not show.
            logger.handle(
                logger.makeRecord(
                    logger.name,
                    logging.INFO,
                    "",
                    0,
                    "request",
                    (),
                    None,
                    extra={"requests": pending},
                )
            )


#: Per access logger (aiohttp makes an :class:`AccessLogger` per connection, on one logger).
_requests: dict[str, _Requests] = {}


def write_pending_requests() -> None:
    """Write the requests answered but not yet logged (a server stopping calls this, as its
    loop will not run their write)."""
    for requests in list(_requests.values()):
        requests.flush()


class AccessLogger(AbstractAccessLogger):
    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        requests = _requests.get(self.logger.name)
        if requests is None:
            requests = _requests[self.logger.name] = _Requests(self.logger)
        requests.add(
            {
                "time": _now(),
                "method": request.method,
                "path": request.path,
                "status": response.status,
                "bytes": response.body_length,
                "seconds": round(time, 6),
            }
        )

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)


#: Loggers whose information lines are left out; their warnings and errors still show. The
#: Postgres pools log every connection lent and returned (three lines a statement); httpx logs
#: every request to the upstream model with its full address, which may carry a credential
#: (``https://user:password@gateway/v1``), and does so before the first token is forwarded.
QUIET_LOGGERS = ("psycopg.pool", "httpx")


def configure() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
