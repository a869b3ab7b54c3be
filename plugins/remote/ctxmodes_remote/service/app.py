"""The HTTP side of ``ctxmodes serve`` (aiohttp).

Routes, under ``/backend-api``: the catalog (``codex/models``), ``wham/accounts/check``,
``wham/settings/user``, ``codex/responses`` (SSE; a WebSocket upgrade is refused with 426 so
that Codex falls back to SSE) and ``codex/alpha/{history|notes}/v2/{operation}``. Every one
of them is authenticated by its bearer token before anything else is read; request bodies
may be zstd-, gzip- or deflate-compressed (decoded in a stream that stops at the size limit,
see :mod:`~ctxmodes_remote.service.bodies`). For operators, without a token and without any
account's data: ``/healthz`` (the process answers), ``/readyz``
(its storage answers) and ``/metrics`` (Prometheus).

Engine calls about a session take turns in arrival order (see
:class:`~ctxmodes_remote.service.workers.SessionTurns`), so a session's state is never touched
concurrently, and an answer leaves only after its writes are on disk. Most run on that
session's worker thread (one worker per connection the storage allows: one for SQLite); note
reads, searches and listings (and on Postgres note writes) run on the event loop itself
(:meth:`~ctxmodes_remote.service.engine.ServiceEngine.alpha_on_loop`), with no trip to a
thread, but for a search or listing of a session's notes too big to scan on the loop. A
token found recently is recognised on the event loop too (see
:class:`~ctxmodes_remote.service.accounts.TokenCache`). Upstream model streams run on
threads of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import orjson
from aiohttp import web

from ctxmodes import AbortController, CtxmodesError
from ctxmodes.providers import Provider
from ctxmodes.windows import OPERATIONS
from ctxmodes_remote.service import catalog
from ctxmodes_remote.service.bodies import (
    BodyEncodingError,
    BodyTimeoutError,
    BodyTooLargeError,
    read_body,
)
from ctxmodes_remote.service.bridge import ResponseStream, flat_namespaces, model_request
from ctxmodes_remote.service.crypto import AccountKeyError, CiphertextError, KeyRing
from ctxmodes_remote.service.engine import RequestError, ServiceEngine, UnknownOperationError
from ctxmodes_remote.service.limits import SearchTurns
from ctxmodes_remote.service.metrics import CONTENT_TYPE, ServiceMetrics
from ctxmodes_remote.service.reasoning import carries_reasoning, wants_summaries
from ctxmodes_remote.service.responses_items import encrypted_fields_by_tool, history_items
from ctxmodes_remote.service.sealing import SealedValueError
from ctxmodes_remote.service.storage import Account, StorageUnavailableError
from ctxmodes_remote.service.upstream import UpstreamStream
from ctxmodes_remote.service.workers import FairWorker, SessionTurns

_log = logging.getLogger("ctxmodes.serve")

BASE_PATH = "/backend-api"
CODEX_PATH = f"{BASE_PATH}/codex"
#: The largest request body accepted, after decompression.
MAX_BODY_BYTES = 64 * 1024 * 1024
#: Seconds a connection may stay idle: waiting for a request's headers (from its opening or
#: the end of the previous answer) or between two reads of a body. Bounds half-open and
#: stalled connections; clients reconnect after it.
IDLE_TIMEOUT_S = 75.0
#: Seconds the upstream model may stay silent (before its first event or between two) before
#: the response fails and the upstream call is aborted.
UPSTREAM_IDLE_TIMEOUT_S = 300.0
ENCRYPTED_ARGUMENTS_HEADER = "x-openai-encrypted-tool-arguments"
#: The operations that take turns within an account while others are served (see
#: :mod:`.limits`).
SEARCH_OPERATIONS = frozenset({("history", "search_contents"), ("notes", "search_contents")})
ROOT_AGENT = "/root"

_T = TypeVar("_T")
_ACCOUNT = web.RequestKey("account", Account)


_TERMINAL_EVENTS = frozenset({"response.completed", "response.failed"})
_OPERATOR_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})


def _operation(request: web.Request) -> str:
    """The metrics label of a request: its operation, or its route for everything else.

    Only names the service defines become labels (an unknown operation is
    ``alpha.unknown``, a path no route matches ``unmatched``), so requests, with or without
    a token, cannot make the metrics grow."""
    info = request.match_info
    if "family" in info and "operation" in info:
        family, operation = info["family"], info["operation"]
        known = OPERATIONS.get(family)  # type: ignore[call-overload]
        if (family, operation) == ("notes", "thread_hint") or (
            known is not None and operation in known
        ):
            return f"{family}.{operation}"
        return "alpha.unknown"
    route = info.route.resource
    return route.canonical if route is not None else "unmatched"


def _json(status: int, value: object) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(value), content_type="application/json")


def _error(status: int, code: str, message: str) -> web.Response:
    return _json(status, {"error": {"code": code, "message": message}})


@dataclass(frozen=True, slots=True)
class TurnIdentity:
    """Whose conversation a ``/responses`` call belongs to."""

    session_id: str
    agent: str
    window_id: str


def turn_identity(request: web.Request, body: dict[str, Any]) -> TurnIdentity | None:
    """From ``x-codex-turn-metadata`` (header, else ``client_metadata``): the session, the
    agent and the model-visible window id (``context_window_id``, else the window header)."""
    raw = request.headers.get("x-codex-turn-metadata")
    client_metadata = body.get("client_metadata")
    if raw is None and isinstance(client_metadata, dict):
        value = client_metadata.get("x-codex-turn-metadata")
        raw = value if isinstance(value, str) else None
    try:
        metadata = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        metadata = {}
    if not isinstance(metadata, dict):
        metadata = {}
    session_id = metadata.get("session_id") or request.headers.get("session-id")
    window_id = metadata.get("context_window_id") or request.headers.get("x-codex-window-id")
    agent = metadata.get("agent_name") or ROOT_AGENT
    if not all(isinstance(value, str) and value for value in (session_id, window_id, agent)):
        return None
    return TurnIdentity(str(session_id), str(agent), str(window_id))


class ServiceApp:
    """The aiohttp application over one engine and one upstream provider."""

    def __init__(
        self,
        engine: ServiceEngine,
        provider: Provider,
        *,
        max_body_bytes: int = MAX_BODY_BYTES,
        upstream_idle_timeout_s: float = UPSTREAM_IDLE_TIMEOUT_S,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        thinking_budgets: Mapping[str, int] | None = None,
    ) -> None:
        self.engine = engine
        self.provider = provider
        self._thinking_budgets = dict(thinking_budgets or {})
        self._max_body_bytes = max_body_bytes
        self._idle_timeout_s = idle_timeout_s
        self._upstream_idle_timeout_s = upstream_idle_timeout_s
        self.metrics = ServiceMetrics()
        held = engine if engine.group_commits() else None
        self._workers = [FairWorker(f"ctxmodes-serve-{n}", held) for n in range(engine.workers)]
        self._searches = SearchTurns()
        self._sessions = SessionTurns()
        self._streams = ThreadPoolExecutor(max_workers=64, thread_name_prefix="ctxmodes-upstream")

    async def reload_keyring(self, keyring: KeyRing) -> None:
        """Use ``keyring`` from the next request on: swapped while every worker waits, so no
        request runs half under the old keys and half under the new (nor during a paused
        one; a call on the event loop keeps the keyring it began with)."""
        everyone = threading.Barrier(
            len(self._workers), action=partial(self.engine.replace_keyring, keyring)
        )
        await asyncio.gather(
            *(
                asyncio.wrap_future(worker.submit("", everyone.wait, nests=False))
                for worker in self._workers
            )
        )

    async def _on_engine(
        self,
        function: Callable[..., _T],
        *args: Any,
        worker: int = 0,
        account_id: str = "",
        session: tuple[str, str] | None = None,
    ) -> _T:
        """``function(*args)`` on the worker thread numbered ``worker``, in the account's
        turn (``""``: calls made for no account yet, such as token lookups); ``session``
        names the account's session the call is about."""
        return await self._workers[worker].submit_from_loop(
            account_id, partial(function, *args), session
        )

    async def _on_session_worker(
        self, account: Account, session_id: str, function: Callable[..., _T], *args: Any
    ) -> _T:
        """``function(*args)`` on the session's worker, in the session's turn and the
        account's."""
        async with self._session_turn(account, session_id):
            return await self._on_its_worker(account, session_id, function, *args)

    async def _on_its_worker(
        self, account: Account, session_id: object, function: Callable[..., _T], *args: Any
    ) -> _T:
        """``function(*args)`` on the worker of the session ``session_id`` names, in the
        account's turn (the caller holds the session's); on worker 0 when it names none (the
        engine refuses such a call)."""
        if not isinstance(session_id, str):
            return await self._on_engine(function, *args, account_id=account.account_id)
        return await self._on_engine(
            function,
            *args,
            worker=self.engine.worker_of(account, session_id),
            account_id=account.account_id,
            session=(account.account_id, session_id),
        )

    def _session_turn(
        self, account: Account, session_id: object
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """The session's turn (none to take when no session is named: the engine refuses
        such a call)."""
        if not isinstance(session_id, str):
            return contextlib.nullcontext()
        return self._sessions.turn((account.account_id, session_id))

    def build(self) -> web.Application:
        app = web.Application(
            client_max_size=self._max_body_bytes,
            middlewares=[self._guard],
        )
        app.router.add_get(f"{CODEX_PATH}/models", self.models)
        app.router.add_get(f"{BASE_PATH}/wham/accounts/check", self.accounts_check)
        app.router.add_get(f"{BASE_PATH}/wham/settings/user", self.settings)
        app.router.add_post(f"{CODEX_PATH}/responses", self.responses)
        app.router.add_post(f"{CODEX_PATH}/alpha/{{family}}/v2/{{operation}}", self.alpha)
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/readyz", self.readyz)
        app.router.add_get("/metrics", self.metrics_endpoint)
        app.on_cleanup.append(self._cleanup)
        return app

    def runner(self, **options: Any) -> web.AppRunner:
        """A runner for the app. A request whose client hangs up is cancelled, so a stream
        whose client is gone aborts its upstream call instead of running on. Bodies are
        decoded by :func:`read_body`, not by aiohttp; a connection idle before a request's
        headers are complete is closed after the idle timeout."""
        return web.AppRunner(
            self.build(),
            handler_cancellation=True,
            auto_decompress=False,
            keepalive_timeout=self._idle_timeout_s,
            **options,
        )

    async def _cleanup(self, app: web.Application) -> None:
        self._streams.shutdown(wait=False, cancel_futures=True)
        for worker in self._workers:
            worker.close()
        await self.engine.close_loop_storage()
        self.engine.close()

    # -- middleware ----------------------------------------------------------------------------

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every request is counted and timed in the metrics. A WebSocket upgrade is refused
        (426); every path but the operators' needs a known bearer token (401); storage that
        fails answers 503, data that does not open 500. One middleware: a layer each costs
        every request a call of its own."""
        start = time.perf_counter()
        status = 500
        try:
            response = await self._guarded(request, handler)
            status = response.status
            return response
        except web.HTTPException as error:
            status = error.status
            raise
        finally:
            self.metrics.observe(_operation(request), status, time.perf_counter() - start)

    async def _guarded(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return _error(426, "websocket_unsupported", "use HTTP with server-sent events")
        try:
            if request.path not in _OPERATOR_PATHS:
                authorization = request.headers.get("Authorization")
                account = self.engine.cached_account(authorization)
                if account is None:
                    worker = hash(authorization) % len(self._workers)
                    account = await self._on_engine(
                        self.engine.authenticate, authorization, worker=worker
                    )
                if account is None:
                    return _error(401, "invalid_token", "a valid bearer token is required")
                request[_ACCOUNT] = account
                self._searches.saw(account.account_id)
            return await handler(request)
        except StorageUnavailableError as error:
            # Nothing was acknowledged: the client may retry once storage is back.
            _log.error("storage unavailable: %s", error)
            return _error(503, "storage_unavailable", "the service's storage is unavailable")
        except (AccountKeyError, SealedValueError) as error:
            # Never an answer made from data the service could not open.
            _log.error("account data refused: %s", error)
            return _error(500, "account_data_unreadable", str(error))

    # -- operators ---------------------------------------------------------------------------

    async def healthz(self, request: web.Request) -> web.Response:
        return _json(200, {"status": "ok"})

    async def readyz(self, request: web.Request) -> web.Response:
        try:
            await self._on_engine(self.engine.ping)
            await self.engine.ping_loop_storage()
        except StorageUnavailableError:
            return _json(503, {"status": "storage unavailable"})
        return _json(200, {"status": "ready"})

    async def metrics_endpoint(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    # -- start-up endpoints ----------------------------------------------------------------------

    async def models(self, request: web.Request) -> web.Response:
        return _json(200, catalog.catalog(self.provider.info))

    async def accounts_check(self, request: web.Request) -> web.Response:
        return _json(200, catalog.accounts_check(request[_ACCOUNT]))

    async def settings(self, request: web.Request) -> web.Response:
        return _json(200, {})

    # -- alpha ------------------------------------------------------------------------------------

    async def _json_body(self, request: web.Request) -> dict[str, Any]:
        """:raises RequestError: not a JSON object.
        :raises web.HTTPException: too large (413), badly encoded (415, 400), stalled (408)."""
        try:
            raw = await read_body(request, self._max_body_bytes, self._idle_timeout_s)
        except BodyTooLargeError as error:
            raise web.HTTPRequestEntityTooLarge(
                max_size=self._max_body_bytes, actual_size=self._max_body_bytes + 1, text=str(error)
            ) from None
        except BodyEncodingError as error:
            raise web.HTTPUnsupportedMediaType(text=str(error)) from None
        except BodyTimeoutError as error:
            raise web.HTTPRequestTimeout(text=str(error)) from None
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise RequestError("the body must be a JSON object") from None
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        return body

    async def alpha(self, request: web.Request) -> web.Response:
        account: Account = request[_ACCOUNT]
        family = request.match_info["family"]
        operation = request.match_info["operation"]
        encrypted = request.headers.get(ENCRYPTED_ARGUMENTS_HEADER, "").lower() == "true"
        try:
            body = await self._json_body(request)
            context = body.get("context")
            session_id = context.get("session_id") if isinstance(context, dict) else None
            on_worker = partial(self._on_its_worker, account, session_id)
            call: Callable[[], Awaitable[dict[str, Any]]]
            if self.engine.runs_on_loop(family, operation):
                call = partial(
                    self.engine.alpha_on_loop,
                    account,
                    family,
                    operation,
                    body,
                    encrypted_arguments=encrypted,
                    on_worker=on_worker,
                )
            else:
                call = partial(
                    on_worker,
                    partial(self.engine.alpha, encrypted_arguments=encrypted),
                    account,
                    family,
                    operation,
                    body,
                )
            if (family, operation) in SEARCH_OPERATIONS:
                # The search is asked for before its session's turn: searches of one session
                # that wait for each other count towards their account's turns as those of
                # several sessions do.
                async with (
                    self._searches.slot(account.account_id, family),
                    self._session_turn(account, session_id),
                ):
                    answer = await call()
            else:
                async with self._session_turn(account, session_id):
                    answer = await call()
        except UnknownOperationError as error:
            return _error(404, "not_found", str(error))
        except RequestError as error:
            return _error(400, "invalid_request", str(error))
        except CiphertextError as error:
            return _error(400, "invalid_encrypted_content", str(error))
        return _json(200, answer)

    # -- responses ---------------------------------------------------------------------------

    def _record_input(
        self,
        account: Account,
        body: dict[str, Any],
        identity: TurnIdentity,
        marked: dict[tuple[str | None, str], frozenset[str]],
    ) -> None:
        """On the engine thread: record the window's items so far."""
        items = body.get("input")
        recorded = history_items(
            [item for item in items if isinstance(item, dict)] if isinstance(items, list) else [],
            identity.window_id,
            marked,
            partial(self.engine.decrypt_text, account),
        )
        self.engine.record(account, identity.session_id, identity.agent, recorded)

    def _record_output(
        self, account: Account, identity: TurnIdentity, output: list[dict[str, Any]]
    ) -> None:
        def refuse(token: object) -> str:
            raise CiphertextError("plaintext output holds no ciphertext")

        recorded = history_items(output, identity.window_id, {}, refuse)
        self.engine.record(account, identity.session_id, identity.agent, recorded)

    async def responses(self, request: web.Request) -> web.StreamResponse:
        account: Account = request[_ACCOUNT]
        try:
            body = await self._json_body(request)
        except RequestError as error:
            return _error(400, "invalid_request", str(error))
        identity = turn_identity(request, body)
        marked = encrypted_fields_by_tool(body.get("tools"))
        controller = AbortController()
        upstream = UpstreamStream(
            asyncio.get_running_loop(), self.provider, controller, self._upstream_idle_timeout_s
        )
        decrypt = partial(self.engine.decrypt_text, account)
        flat = flat_namespaces(body.get("tools"), self.provider.info)
        # The model is called at once, from a stream thread (the session's worker may be
        # busy); the worker records the turn's input while the model prepares its answer.
        # Nothing reaches the client before that record is durable, and a refused input or a
        # failed record aborts the call.
        self._streams.submit(
            upstream.run,
            partial(
                model_request,
                body,
                self.provider.info,
                marked,
                decrypt,
                flat,
                self._thinking_budgets,
            ),
        )
        try:
            await upstream.built()
            if identity is not None:
                await self._on_session_worker(
                    account,
                    identity.session_id,
                    self._record_input,
                    account,
                    body,
                    identity,
                    marked,
                )
        except CiphertextError as error:
            controller.abort("request refused")
            return _error(400, "invalid_encrypted_content", str(error))
        except BaseException:
            controller.abort("request failed")
            raise

        stream = ResponseStream(
            model=self.provider.info.id,
            marked=marked,
            encrypt=partial(self.engine.encrypt_text, account),
            flat=flat,
            reasoning_of=self.provider.info if carries_reasoning(body) else None,
            reasoning_summaries=wants_summaries(body),
        )
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        try:
            await response.prepare(request)
            await _write(response, [_frame(kind, data) for kind, data in stream.start()])
            async for event in upstream.events():
                # The events one upstream event makes leave in one write.
                frames: list[bytes] = []
                for kind, data in stream.feed(event):
                    if kind in _TERMINAL_EVENTS and identity is not None:
                        # Recorded before the client learns the response is over, so the
                        # history it reads next already holds this response's items.
                        await _write(response, frames)
                        frames = []
                        await self._record(account, identity, stream.plain_output)
                    frames.append(_frame(kind, data))
                await _write(response, frames)
                upstream.forwarded()
        except (ConnectionResetError, asyncio.CancelledError):
            controller.abort("client disconnected")
            raise
        finally:
            controller.abort("response finished")
        # A client may hang up as soon as it has read ``response.completed``.
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    async def _record(
        self, account: Account, identity: TurnIdentity, output: list[dict[str, Any]]
    ) -> None:
        try:
            await self._on_session_worker(
                account, identity.session_id, self._record_output, account, identity, output
            )
        except StorageUnavailableError as error:
            # The answer still goes out; its items are recorded with the next turn, which
            # resends them.
            _log.error("history not recorded: %s", error)


async def _write(response: web.StreamResponse, frames: list[bytes]) -> None:
    if frames:
        await response.write(b"".join(frames))


def _frame(kind: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """A server TLS context (TLS 1.2 or newer) for the given certificate chain and key.

    :raises CtxmodesError: the files cannot be loaded.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as exc:
        raise CtxmodesError(
            f"cannot load TLS certificate {cert_file} / key {key_file}: {exc}"
        ) from None
    return context
