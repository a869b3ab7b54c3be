"""The HTTP seam: how model transports and a provider's backend calls reach the network, and
the one mechanism that ends a request early (an abort, or its deadline).

Every transport takes an :class:`HttpSeam`. Its ``transport`` is any
:class:`httpx.BaseTransport`: tests inject an in-process one (``httpx.MockTransport``, or an
ASGI/WSGI app behind a transport) or point the default at a loopback server. Without one,
proxies (``HTTPS_PROXY``, ``ALL_PROXY``…) and ``NO_PROXY`` apply exactly as httpx resolves
them from the environment: when the environment names a proxy the seam's clients are plain
httpx clients, otherwise every request goes direct through a keep-alive transport.

Ending a request must be prompt even while a read is blocked in another thread, in any
phase: connecting, waiting for the answer's headers, reading its body. Closing a socket from
another thread does not wake a blocked ``recv`` on Linux; ``shutdown`` does. So, inside
:func:`guarded`, every request of the thread tells the scope which socket it uses, and the
scope shuts those sockets down when the signal aborts or the deadline passes. Direct
connections are kept alive and reused (as Pi's ``fetch`` reuses them):
:class:`~ctxmodes.providers.keepalive.KeepAliveTransport` hands a connection's socket to the
scope of each request before the request sends, and takes it back when the answer is closed
and the connection returns to the pool, so an abort never reaches another request's
connection. Requests through a proxy, and HTTP/2 ones, use httpx's own transport: there the
public ``trace`` extension reports each connection as it opens, and connections are not
reused (one request, one connection, known from its first byte). An injected transport
without real sockets is stopped between reads instead (see
:meth:`~ctxmodes.providers.transport.call.CallContext.guard`).
"""

from __future__ import annotations

import contextlib
import functools
import http.cookiejar
import socket
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import httpx

from ctxmodes.abort import AbortSignal
from ctxmodes.providers import deadlines
from ctxmodes.providers.keepalive import KeepAliveTransport, reclaim

__all__ = ["HttpSeam", "RequestScope", "finish_answer", "guarded"]

#: The longest connection setup allowed, whatever the read timeout.
CONNECT_TIMEOUT_S = 30.0
#: How long the end of an answer may lag behind its last event before the connection is
#: given up (closed) instead of kept for the next request.
FINISH_S = 0.05

_local = threading.local()


class RequestScope:
    """The sockets of the requests made inside one :func:`guarded` block.

    :meth:`cut` shuts them all down, now and as they appear (thread-safe); ``expired`` says
    whether the deadline did it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cut = False
        self.expired = False

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            if not any(existing is sock for existing in self._sockets):
                self._sockets.append(sock)
            cut = self._cut
        if cut:
            _shutdown(sock)

    def detach(self, sock: socket.socket) -> None:
        """Forget ``sock`` (its connection is going back to the pool)."""
        with self._lock:
            self._sockets = [existing for existing in self._sockets if existing is not sock]

    def cut(self) -> None:
        # Under the lock: a socket being detached (its connection about to go back to the
        # pool, for another request to take) is either shut down first or not at all.
        with self._lock:
            self._cut = True
            for sock in self._sockets:
                _shutdown(sock)

    def expire(self) -> None:
        self.expired = True
        self.cut()

    def trace(self, event: str, info: Mapping[str, object]) -> None:
        """httpx's ``trace`` extension: keep the socket of each connection opened."""
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            extra = getattr(stream, "get_extra_info", None)
            sock = extra("socket") if callable(extra) else None
            if isinstance(sock, socket.socket):
                self.attach(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def guarded(signal: AbortSignal | None, deadline_s: float | None = None) -> Iterator[RequestScope]:
    """Run this thread's requests so that ``signal`` or the deadline ends them at once.

    Inside the block every request sent through an :class:`HttpSeam` client joins the
    scope; when ``signal`` aborts or ``deadline_s`` seconds pass, their sockets are shut
    down, which wakes a blocked connect or read with an error (or end of stream). Blocks
    nest; the innermost scope is the one requests join.
    """
    scope = RequestScope()
    previous: RequestScope | None = getattr(_local, "scope", None)
    _local.scope = scope
    unregister = signal.add_callback(scope.cut) if signal is not None else None
    deadline = deadlines.after(deadline_s, scope.expire) if deadline_s is not None else None
    try:
        yield scope
    finally:
        if deadline is not None:
            deadline.cancel()
        if unregister is not None:
            unregister()
        _local.scope = previous


def finish_answer(response: httpx.Response, rest: Iterable[object]) -> None:
    """Read what is left of an answer whose last event has arrived (its end, usually already
    received) from ``rest``, the iterator that read the events, so that its connection goes
    back to the pool; an end that takes longer than :data:`FINISH_S` costs the connection
    instead. Transport errors are ignored: the answer is complete."""
    if response.is_closed:
        return
    with guarded(None, FINISH_S):
        if not reclaim(response):
            return
        with contextlib.suppress(httpx.HTTPError):
            for _ in rest:
                pass


def _join_scope(request: httpx.Request) -> None:
    scope: RequestScope | None = getattr(_local, "scope", None)
    if scope is not None:
        request.extensions["trace"] = scope.trace


def _claim(sock: socket.socket) -> functools.partial[None] | None:
    """The socket a request of this thread is about to use joins the thread's scope."""
    scope: RequestScope | None = getattr(_local, "scope", None)
    if scope is None:
        return None
    scope.attach(sock)
    return functools.partial(scope.detach, sock)


class _NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: Pi's ``fetch`` sends no cookie a server set before."""

    def extract_cookies(self, response: object, request: object) -> None:
        return None


def proxy_for(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``, ``HTTP_PROXY`` or
    ``ALL_PROXY``, unless ``NO_PROXY`` exempts its host), without the user and password it
    may carry; ``None`` when the request goes directly."""
    parts = urllib.parse.urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    # The standard library has it on every platform; typeshed does not declare it.
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if bypass(parts.hostname or "", proxies):
        return None
    shown = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return shown._replace(netloc=shown.netloc.rpartition("@")[2]).geturl()


def _environment_proxies() -> bool:
    """Whether httpx would send some request through a proxy named in the environment (it
    reads ``http``, ``https`` and ``all`` from :func:`urllib.request.getproxies`)."""
    found = urllib.request.getproxies()
    return any(found.get(scheme) for scheme in ("http", "https", "all"))


@dataclass
class HttpSeam:
    """Where a transport's requests go.

    :ivar transport: an httpx transport to use instead of httpx's own (which honours the
        proxy variables and ``NO_PROXY``). In-process transports make tests fast; a loopback
        server makes them real.
    :ivar user_agent: the ``User-Agent`` sent, Pi's ``pi (<platform> <release>; <arch>)``
        by default, so servers see the same client whichever of the two sent a request.
    """

    transport: httpx.BaseTransport | None = None
    user_agent: str | None = None
    #: By read timeout, and by ``(timeout, http2 mode)`` for HTTP/2 clients.
    _clients: dict[float | tuple[float | None, str] | None, httpx.Client] = field(
        default_factory=dict, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def client(self, timeout_s: float | None, *, http2: str | None = None) -> httpx.Client:
        """A client whose read and write timeouts are ``timeout_s`` (None: no limit).

        ``http2="alpn"`` offers HTTP/2 on TLS (HTTP/1.1 where the server declines),
        ``http2="prior"`` speaks HTTP/2 from the first byte (cleartext ``http://``, as the
        AWS SDK's HTTP/2 handler does). Such a client connects directly: HTTP/2 is not
        sent through a proxy (the caller uses a plain client when one applies). An
        injected transport is used as it is.
        """
        key: float | tuple[float | None, str] | None = (
            timeout_s if http2 is None else (timeout_s, http2)
        )
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                transport = self.transport
                hooks: dict[str, list[Callable[[httpx.Request], None]]] = {"request": [_join_scope]}
                if transport is None and http2 is not None:
                    # One connection per request, known to the abort scope from its start
                    # (HTTP/2 would share a kept one between concurrent requests).
                    transport = httpx.HTTPTransport(
                        http1=http2 != "prior",
                        http2=True,
                        limits=httpx.Limits(max_keepalive_connections=0),
                    )
                elif transport is None and not _environment_proxies():
                    transport, hooks = KeepAliveTransport(_claim), {}
                client = httpx.Client(
                    transport=transport,
                    timeout=httpx.Timeout(
                        timeout_s, connect=min(timeout_s or CONNECT_TIMEOUT_S, CONNECT_TIMEOUT_S)
                    ),
                    limits=httpx.Limits(max_keepalive_connections=0),
                    follow_redirects=False,
                    cookies=_NoCookies(),
                    event_hooks=hooks,
                )
                self._clients[key] = client
            return client

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
