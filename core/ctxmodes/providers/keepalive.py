"""An httpx transport that keeps connections alive and says which socket each request uses.

httpx's own transport reports a connection's socket only when it is opened (its ``trace``
extension), so a request on a reused connection could not be cut short while it waits for
the answer's headers. This transport builds the same httpcore connection pool httpx builds,
through httpcore's public network-backend seam: every stream it opens tells ``on_use`` its
socket each time it sends, in the sending thread. A request always sends before it reads, so
the thread's abort scope knows the socket, new or reused, before anything can block on it.

Used for direct connections only (see :meth:`ctxmodes.providers.http.HttpSeam.client`):
requests through a proxy keep httpx's own transport.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import typing
from collections.abc import Callable, Iterable, Iterator

import httpcore
import httpx

__all__ = ["Claim", "KeepAliveTransport", "reclaim"]

#: httpcore's exceptions as httpx raises them, most specific first (httpx's own mapping).
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)

#: Told the socket a request is about to use; returns how to hand it back (or None).
Claim = Callable[[socket.socket], Callable[[], None] | None]


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as error:
        for source, target in _ERRORS:
            if isinstance(error, source):
                raise target(str(error)) from error
        raise


class _ReportingStream(httpcore.NetworkStream):
    """A network stream that claims its socket for the sending thread's request before it
    sends, until :meth:`release` (the answer closed, the connection back in the pool)."""

    def __init__(self, stream: httpcore.NetworkStream, claim: Claim) -> None:
        self._stream = stream
        self._claim = claim
        self._release: Callable[[], None] | None = None
        sock = stream.get_extra_info("socket")
        self._socket = sock if isinstance(sock, socket.socket) else None

    def _claimed(self) -> None:
        if self._release is None and self._socket is not None:
            self._release = self._claim(self._socket)

    def release(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()

    def reclaim(self) -> None:
        self.release()
        self._claimed()

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._claimed()
        self._stream.write(buffer, timeout)

    def close(self) -> None:
        self.release()
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        self._claimed()  # the handshake blocks on the socket too
        secured = self._stream.start_tls(ssl_context, server_hostname, timeout)
        # The TLS socket replaces the plain one (whose descriptor it took).
        self.release()
        reporting = _ReportingStream(secured, self._claim)
        reporting._claimed()
        return reporting

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class _ReportingBackend(httpcore.NetworkBackend):
    def __init__(self, claim: Claim) -> None:
        self._backend = httpcore.SyncBackend()
        self._claim = claim

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return _ReportingStream(stream, self._claim)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_unix_socket(path, timeout, socket_options)
        return _ReportingStream(stream, self._claim)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _Body(httpx.SyncByteStream):
    def __init__(self, parts: Iterable[bytes], stream: object) -> None:
        self._parts = parts
        self._stream = stream if isinstance(stream, _ReportingStream) else None

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._parts

    def close(self) -> None:
        # Handed back before the connection returns to the pool, where another thread's
        # request may take it at once.
        if self._stream is not None:
            self._stream.release()
        close = getattr(self._parts, "close", None)
        if callable(close):
            with _httpx_errors():
                close()


class KeepAliveTransport(httpx.BaseTransport):
    """httpx's default transport for direct HTTP/1.1 connections (TLS verified as httpx
    verifies, ``SSL_CERT_FILE`` honoured), idle connections kept ``keepalive_s`` seconds;
    ``claim`` hears the socket of every request before it sends."""

    def __init__(self, claim: Claim, *, keepalive_s: float = 5.0) -> None:
        limits = httpx.Limits()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=keepalive_s,
            network_backend=_ReportingBackend(claim),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        url = request.url
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            answer = self._pool.handle_request(core_request)
        assert isinstance(answer.stream, Iterable)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream, answer.extensions.get("network_stream")),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self._pool.close()


def reclaim(response: httpx.Response) -> bool:
    """Hand the socket of ``response``'s connection to the calling thread's innermost scope
    (one opened after the request was sent); False if the answer did not come through a
    :class:`KeepAliveTransport`."""
    stream = response.extensions.get("network_stream")
    if not isinstance(stream, _ReportingStream):
        return False
    stream.reclaim()
    return True
