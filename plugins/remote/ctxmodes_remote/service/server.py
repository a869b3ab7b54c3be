"""Starting and stopping the service: open storage and keys, resolve the upstream model,
listen, and shut down cleanly on SIGINT or SIGTERM.

The process runs on uvloop's event loop where it is installed (the ``serve`` extra installs
it on every platform it supports): its loop, sockets and wake-ups from other threads are C,
and a note call costs the process a tenth to a fifth less CPU than on asyncio's own loop."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from aiohttp import web

from ctxmodes import CtxmodesError
from ctxmodes.providers import Provider
from ctxmodes_remote.service import logs
from ctxmodes_remote.service.app import (
    CODEX_PATH,
    IDLE_TIMEOUT_S,
    UPSTREAM_IDLE_TIMEOUT_S,
    ServiceApp,
    tls_context,
)
from ctxmodes_remote.service.crypto import (
    KEY_FILE_NAME,
    KeyFileError,
    load_keyring,
    load_or_create_keyring,
)
from ctxmodes_remote.service.engine import ServiceEngine
from ctxmodes_remote.service.storage import DEFAULT_CONNECTIONS, open_storage

_log = logging.getLogger("ctxmodes.serve")
#: Helper processes that check big pages of history search candidates (started on first
#: use; see :mod:`~ctxmodes_remote.service.candidates`): one per core, at most four.
SEARCH_PROCESSES = min(4, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    upstream: str
    data: Path
    database: str | None
    host: str
    port: int
    tls_cert: str | None = None
    tls_key: str | None = None
    upstream_timeout_s: float = UPSTREAM_IDLE_TIMEOUT_S
    idle_timeout_s: float = IDLE_TIMEOUT_S
    #: Postgres connections (and worker threads) of the process.
    database_connections: int = DEFAULT_CONNECTIONS


async def _serve(config: ServerConfig) -> None:
    from ctxmodes.sdk import configured_thinking_budgets

    context = (
        tls_context(config.tls_cert, config.tls_key)
        if config.tls_cert is not None and config.tls_key is not None
        else None
    )
    provider = resolve_upstream(config.upstream)
    storage = open_storage(config.data, config.database, connections=config.database_connections)
    try:
        if not (config.data / KEY_FILE_NAME).exists() and storage.account_keys():
            # A new key would open none of it: refuse rather than start with one.
            raise KeyFileError(
                f"{config.data / KEY_FILE_NAME} is missing, and the database is encrypted "
                "under it: copy it from another process of this service, or restore it"
            )
        engine = ServiceEngine(
            storage, load_or_create_keyring(config.data), search_processes=SEARCH_PROCESSES
        )
    except BaseException:
        storage.close()
        raise
    service = ServiceApp(
        engine,
        provider,
        upstream_idle_timeout_s=config.upstream_timeout_s,
        idle_timeout_s=config.idle_timeout_s,
        thinking_budgets=configured_thinking_budgets(),
    )
    runner = service.runner(access_log_class=logs.AccessLogger)
    await runner.setup()
    try:
        site = web.TCPSite(runner, config.host, config.port, ssl_context=context)
        try:
            await site.start()
        except OSError as error:
            # A port in use, an address not of this machine: the user's to fix, in one line.
            reason = os.strerror(error.errno) if error.errno else str(error)
            raise CtxmodesError(f"cannot listen on {config.host}:{config.port}: {reason}") from None
        scheme = "https" if context is not None else "http"
        port = runner.addresses[0][1]
        host = f"[{config.host}]" if ":" in config.host else config.host
        if context is None:
            print(
                "ctxmodes serve: warning: plain HTTP; the Codex CLI requires HTTPS "
                "(pass --tls-cert and --tls-key, or put a TLS proxy in front)",
                file=sys.stderr,
            )
        if not storage.list_tokens():
            _log.warning(no_tokens_hint(config))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        # SIGHUP re-reads the key file: after `ctxmodes serve key rotate`, new outputs use
        # the new key and everything made under the old ones still opens.
        loop.add_signal_handler(signal.SIGHUP, lambda: loop.create_task(reload_keys()))

        async def reload_keys() -> None:
            try:
                keyring = load_keyring(config.data)
            except CtxmodesError as error:
                _log.error("keys not reloaded: %s", error)
                return
            await service.reload_keyring(keyring)
            _log.info("keys reloaded: %d master key(s)", keyring.key_count)

        # What start-up made (modules, the app, the storage's pools) lives as long as the
        # process: frozen, it is left out of the collector's full passes, each of which
        # otherwise walked it all while every request waited (40-50 ms, once every few
        # thousand calls: most of the p99 at 32 sessions).
        gc.collect()
        gc.freeze()
        # The one line a supervisor (or a test) reads to learn the address; only once the
        # signals are handled, so a SIGTERM sent as soon as it is read stops the service
        # the graceful way.
        print(f"ctxmodes serve: listening on {scheme}://{host}:{port}{CODEX_PATH}", flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()
        logs.write_pending_requests()
        provider.close()


def no_tokens_hint(config: ServerConfig) -> str:
    """What a service with no token yet logs: every request will be refused until one is
    made, and how to make one (the database named, not its URL, which may hold a
    password)."""
    database = " --database URL" if config.database else ""
    return (
        "no token issued yet, so every request is refused; issue one for each agent with "
        f"`ctxmodes serve token create NAME --data {config.data}{database}`"
    )


def resolve_upstream(spec: str) -> Provider:
    """The upstream model, found as ``ctxmodes run --model`` finds one: built-in tables,
    ``[providers.<name>]`` in the configuration, and models that plugins register."""
    from ctxmodes.sdk import resolve_model

    return resolve_model(spec)


#: How long a thread may hold the interpreter before it is handed on, on Postgres (Python's
#: own: 5 ms). The event loop runs note statements while worker threads search and decrypt; at
#: Python's interval a call arriving on the loop could wait that long behind one account's
#: heavy search, which another account then sees in its p99. On SQLite, where writes go
#: through the worker, the extra hand-overs cost 6-12 % of the write rate and isolation holds
#: without them, so Python's interval stays (see the benchmarks' isolation figures).
SWITCH_INTERVAL_S: Final = 0.0005


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop's event loop where it is installed, else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop
    return uvloop.new_event_loop


def run_server(config: ServerConfig) -> None:
    logs.configure()
    switch_interval = sys.getswitchinterval()
    if config.database is not None:
        sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(_serve(config))
    finally:
        sys.setswitchinterval(switch_interval)
