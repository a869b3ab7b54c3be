"""The HTTP seam over real loopback sockets: proxies and ``NO_PROXY`` as httpx resolves them,
and the one abort-and-deadline mechanism, in every phase of a request."""

from __future__ import annotations

import socket
import ssl
import threading
import time

import httpx
import pytest
from support.aborts import abort_and_wait
from support.service_rig import make_tls
from support.wire_server import Reply, WireServer, text_stream

from ctxmodes.abort import AbortController
from ctxmodes.providers.apis import stream_function
from ctxmodes.providers.catalog import ModelCatalog, builtin_models
from ctxmodes.providers.http import HttpSeam, guarded
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import PiContext, StreamOptions

API = "openai-responses"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def _dead_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _clear_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def _ask(base_url: str, seam: HttpSeam) -> dict[str, object]:
    model = ModelCatalog(builtin_models()).get("openai/gpt-5.1")
    model = model.model_copy(update={"base_url": base_url})
    context = PiContext("Be brief.", [{"role": "user", "content": "hi", "timestamp": 1}])
    call = CallContext(seam=seam, signal=AbortController().signal)
    return stream_function(API)(model, context, StreamOptions(api_key="sk-loopback"), call)


def test_a_loopback_model_is_reached_directly_past_a_dead_proxy(monkeypatch):
    _clear_proxies(monkeypatch)
    dead = f"http://127.0.0.1:{_dead_port()}"
    monkeypatch.setenv("HTTPS_PROXY", dead)
    monkeypatch.setenv("ALL_PROXY", dead)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    seam = HttpSeam()
    with WireServer([Reply(text_stream(API, "Hello"))]) as server:
        message = _ask(f"{server.base_url}/v1", seam)
    seam.close()
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert message["content"] == [
        {"type": "text", "text": "Hello", "textSignature": '{"v":1,"id":"msg_1"}'}
    ]


def test_the_proxy_variables_route_requests_through_the_proxy(monkeypatch):
    _clear_proxies(monkeypatch)
    with WireServer([Reply(text_stream(API, "Hi"))]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url)
        seam = HttpSeam()
        message = _ask("http://model.invalid/v1", seam)
        seam.close()
    assert message["stopReason"] == "stop", message.get("errorMessage")
    # A forward proxy receives the absolute URL of the model, which it alone resolves.
    assert proxy.requests[0]["path"] == "http://model.invalid/v1/responses"


def test_no_proxy_sends_a_listed_host_around_the_proxy(monkeypatch):
    _clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_dead_port()}")
    seam = HttpSeam()
    with WireServer([Reply(text_stream(API, "Hi"))]) as server:
        refused = _ask(f"{server.base_url}/v1", seam)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        seam.close()
        seam = HttpSeam()
        answered = _ask(f"{server.base_url}/v1", seam)
    seam.close()
    assert refused["stopReason"] == "error"
    assert answered["stopReason"] == "stop", answered.get("errorMessage")


def test_the_deadline_ends_a_request_waiting_for_headers():
    seam = HttpSeam()
    with WireServer([Reply(behaviour="no_headers")]) as server:
        client = seam.client(None)
        started = time.monotonic()
        with guarded(None, deadline_s=0.2) as scope, pytest.raises(httpx.TransportError):
            client.post(f"{server.base_url}/v1/x", content=b"{}")
        elapsed = time.monotonic() - started
    seam.close()
    assert scope.expired
    assert elapsed < 2


def test_a_direct_connection_serves_the_next_request():
    seam = HttpSeam()
    replies = [Reply([b"{}"], headers={"content-type": "application/json"}) for _ in range(3)]
    with WireServer(replies) as server:
        client = seam.client(None)
        for path in ("/a", "/b"):
            with guarded(AbortController().signal):
                assert client.post(f"{server.base_url}{path}", content=b"{}").status_code == 200
        assert client.post(f"{server.base_url}/c", content=b"{}").status_code == 200
    seam.close()
    assert len({request["peer"] for request in server.requests}) == 1


def _abort_while_waiting(client: httpx.Client, url: str, arrived: threading.Event) -> None:
    """POST ``url`` on another thread under an abort scope, abort it once the server holds
    the request without answering: the request must fail, and at once."""
    controller = AbortController()
    failure: list[BaseException] = []

    def waiting() -> None:
        with guarded(controller.signal):
            try:
                client.post(url, content=b"{}")
            except httpx.TransportError as error:
                failure.append(error)

    arrived.clear()
    worker = threading.Thread(target=waiting)
    worker.start()
    assert arrived.wait(5)
    abort_and_wait(controller, worker)
    assert failure


def _abort_a_second_request_waiting_for_headers(tls: ssl.SSLContext | None = None) -> None:
    """Two requests on one seam, the second left unanswered and aborted while it waits:
    it reuses the first one's connection and still ends at once."""
    seam = HttpSeam()
    replies = [Reply([b"{}"], headers={"content-type": "application/json"})]
    with WireServer([*replies, Reply(behaviour="no_headers")], tls=tls) as server:
        client = seam.client(None)
        with guarded(AbortController().signal):
            assert client.post(f"{server.base_url}/a", content=b"{}").status_code == 200
        _abort_while_waiting(client, f"{server.base_url}/b", server.arrived)
    seam.close()
    assert server.requests[0]["peer"] == server.requests[1]["peer"]


def test_an_abort_ends_a_second_request_on_the_same_seam_while_it_waits_for_headers():
    """The second request's socket is known to its scope before it sends."""
    _abort_a_second_request_waiting_for_headers()


def test_an_abort_ends_a_request_on_a_reused_tls_connection(monkeypatch, tmp_path):
    """Models are reached over TLS: the secured socket of a kept connection is the one the
    next request's scope knows."""
    tls = make_tls(tmp_path / "tls")
    monkeypatch.setenv("SSL_CERT_FILE", str(tls.ca))
    _abort_a_second_request_waiting_for_headers(tls.server_context())


def test_aborting_a_finished_request_leaves_its_reused_connection_alone():
    """A connection back in the pool belongs to whichever request takes it next: the scope
    that used it before lets go of it, so its abort cuts nothing."""
    seam = HttpSeam()
    first, second = AbortController(), AbortController()
    body = [b"part one ", b"part two"]
    replies = [
        Reply([b"{}"], headers={"content-type": "application/json"}),
        Reply(body, behaviour="hold", cut_after=1),
    ]
    with WireServer(replies) as server:
        client = seam.client(None)
        received: list[bytes] = []
        failure: list[BaseException] = []
        streaming = threading.Event()

        def later() -> None:
            with guarded(second.signal):
                try:
                    with client.stream("POST", f"{server.base_url}/b", content=b"{}") as answer:
                        for chunk in answer.iter_raw():
                            received.append(chunk)
                            streaming.set()
                except httpx.TransportError as error:
                    failure.append(error)

        with guarded(first.signal):
            assert client.post(f"{server.base_url}/a", content=b"{}").status_code == 200
            worker = threading.Thread(target=later)
            worker.start()
            assert streaming.wait(5)
            first.abort()  # still inside the first request's scope
            worker.join(0.2)
            # A cut connection would read as the end of this close-delimited body.
            still_streaming = worker.is_alive()
        server.release.set()
        worker.join(5)
    seam.close()
    assert server.requests[0]["peer"] == server.requests[1]["peer"]
    assert still_streaming
    assert not failure
    assert b"".join(received) == b"part one "


def test_an_abort_while_reading_a_reused_connection_ends_the_read():
    seam = HttpSeam()
    controller = AbortController()
    replies = [
        Reply([b"{}"], headers={"content-type": "application/json"}),
        Reply([b"data: 1\n\n", b"data: 2\n\n"], behaviour="hold", cut_after=1),
    ]
    with WireServer(replies) as server:
        client = seam.client(None)
        assert client.post(f"{server.base_url}/a", content=b"{}").status_code == 200
        failure: list[BaseException] = []
        streaming = threading.Event()

        def read() -> None:
            with guarded(controller.signal):
                try:
                    with client.stream("POST", f"{server.base_url}/b", content=b"{}") as answer:
                        for _ in answer.iter_raw():
                            streaming.set()
                except httpx.TransportError as error:
                    failure.append(error)

        worker = threading.Thread(target=read)
        worker.start()
        assert streaming.wait(5)
        time.sleep(0.05)  # let the reader block on the next chunk
        started = time.monotonic()
        controller.abort()
        worker.join(2)
        elapsed = time.monotonic() - started
    seam.close()
    assert server.requests[0]["peer"] == server.requests[1]["peer"]
    assert not worker.is_alive()
    assert elapsed < 0.1


def test_a_cookie_a_server_sets_is_not_sent_back():
    """Pi's ``fetch`` keeps no cookie jar: a later request carries no ``Cookie`` header."""
    seam = HttpSeam()
    replies = [
        Reply([b"{}"], headers={"content-type": "application/json", "set-cookie": "s=1; Path=/"}),
        Reply([b"{}"], headers={"content-type": "application/json"}),
    ]
    with WireServer(replies) as server:
        client = seam.client(None)
        for path in ("/a", "/b"):
            assert client.post(f"{server.base_url}{path}", content=b"{}").status_code == 200
    seam.close()
    assert "Cookie" not in server.requests[1]["headers"]


class _Http2Server:
    """A cleartext HTTP/2 server (prior knowledge, as the AWS SDK speaks it) that answers
    every request with ``{}``, or never answers when ``silent``; it records the peer of
    each request."""

    def __init__(self, *, silent: bool = False) -> None:
        self.silent = silent
        self.peers: list[tuple[str, int]] = []
        self.arrived = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn, peer), daemon=True).start()

    def _serve(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        import h2.config
        import h2.connection
        import h2.events

        h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        h2conn.initiate_connection()
        with conn:
            conn.sendall(h2conn.data_to_send())
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.StreamEnded):
                        self.peers.append(peer)
                        self.arrived.set()
                        if not self.silent:
                            headers = [(":status", "200"), ("content-type", "application/json")]
                            h2conn.send_headers(event.stream_id, headers)
                            h2conn.send_data(event.stream_id, b"{}", end_stream=True)
                conn.sendall(h2conn.data_to_send())

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


def test_http2_requests_open_a_connection_each_and_an_abort_ends_one_waiting():
    """HTTP/2 would share a kept connection between concurrent requests: each request has
    its own, whose socket its abort scope knows from the start."""
    server = _Http2Server()
    seam = HttpSeam()
    client = seam.client(None, http2="prior")
    for path in ("/a", "/b"):
        with guarded(AbortController().signal):
            assert client.post(f"{server.base_url}{path}", content=b"{}").status_code == 200
    assert len(set(server.peers)) == 2
    server.silent = True
    _abort_while_waiting(client, f"{server.base_url}/c", server.arrived)
    seam.close()
    server.close()
