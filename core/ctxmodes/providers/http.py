"""The HTTP seam: how model transports (and Remote's backend client) reach the network.

Every transport takes an :class:`HttpSeam`. Its ``transport`` is any
:class:`httpx.BaseTransport`: tests inject an in-process one (``httpx.MockTransport``, or
an ASGI/WSGI app behind a transport) or point the default at a loopback server; nothing
else in a transport knows how bytes travel.

Abort must close a connection promptly even while a read is blocked in another thread.
Closing a socket from another thread does not wake a blocked ``recv`` on Linux;
``shutdown`` does. The default transport therefore wraps httpcore's network streams so that
each request, inside :func:`abortable`, knows the sockets it is reading and writing, and an
abort shuts them down at once. An injected transport without real sockets is stopped between
reads instead (the stream is closed and iteration ends).

Importing this module imports httpx, so command-line code imports it lazily.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

if TYPE_CHECKING:
    import ssl

    from ctxmodes.abort import AbortSignal

__all__ = ["AbortScope", "HttpSeam", "abortable", "watched_transport"]

_local = threading.local()


class AbortScope:
    """The sockets one request uses; :meth:`shutdown` cuts them all (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._shut = False

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            if any(existing is sock for existing in self._sockets):
                return
            self._sockets.append(sock)
            shut = self._shut
        if shut:
            _shutdown(sock)

    def shutdown(self) -> None:
        with self._lock:
            self._shut = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def abortable(signal: AbortSignal) -> Iterator[AbortScope]:
    """Run the requests of this thread inside an abort scope bound to ``signal``.

    While the block runs, every socket the default transport reads from or writes to on this
    thread joins the scope; when ``signal`` aborts, those sockets are shut down, which wakes
    a blocked read with an error or end of stream.
    """
    scope = AbortScope()
    previous = getattr(_local, "scope", None)
    _local.scope = scope
    unregister = signal.add_callback(scope.shutdown)
    try:
        yield scope
    finally:
        unregister()
        _local.scope = previous


class _WatchedStream(httpcore.NetworkStream):
    """A network stream that joins the current thread's abort scope whenever it is used."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner
        sock = inner.get_extra_info("socket")
        self._socket: socket.socket | None = sock if isinstance(sock, socket.socket) else None

    def _join(self) -> None:
        scope: AbortScope | None = getattr(_local, "scope", None)
        if scope is not None and self._socket is not None:
            scope.attach(self._socket)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._join()
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._join()
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _WatchedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _WatchedBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = _WatchedStream(
            self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        )
        stream._join()
        return stream

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return _WatchedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _environment_proxy() -> str | None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        value = os.environ.get(name)
        if value:
            return value
    return None


def watched_transport(*, proxy: str | None = None) -> httpx.HTTPTransport:
    """httpx's own transport, with sockets that :func:`abortable` can cut."""
    transport = httpx.HTTPTransport(proxy=proxy, retries=0)
    pool = transport._pool  # httpx builds the pool itself; only its backend is swapped
    pool._network_backend = _WatchedBackend(pool._network_backend)
    return transport


@dataclass
class HttpSeam:
    """Where a transport's requests go.

    :ivar transport: an httpx transport to use instead of the default (httpx's, with
        abortable sockets, honouring ``HTTPS_PROXY``). In-process transports make tests fast;
        a loopback server makes them real.
    :ivar user_agent: the ``User-Agent`` sent, Pi's ``pi (<platform> <release>; <arch>)``
        by default, so servers see the same client whichever of the two sent a request.
    """

    transport: httpx.BaseTransport | None = None
    user_agent: str | None = None
    _clients: dict[float | None, httpx.Client] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def client(self, timeout_s: float | None) -> httpx.Client:
        """A pooled client whose read and write timeouts are ``timeout_s`` (None: no limit)."""
        with self._lock:
            client = self._clients.get(timeout_s)
            if client is None:
                transport = self.transport
                if transport is None:
                    transport = watched_transport(proxy=_environment_proxy())
                client = httpx.Client(
                    transport=transport,
                    timeout=httpx.Timeout(timeout_s, connect=min(timeout_s or 30.0, 30.0)),
                    follow_redirects=False,
                )
                self._clients[timeout_s] = client
            return client

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
