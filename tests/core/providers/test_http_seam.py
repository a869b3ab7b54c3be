"""The HTTP seam over real loopback sockets: proxies and ``NO_PROXY`` as httpx resolves them,
and the one abort-and-deadline mechanism, in every phase of a request."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
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


def test_an_abort_ends_a_second_request_on_the_same_seam_while_it_waits_for_headers():
    """The second request reuses the first one's connection: its socket is known to the
    second request's scope before it sends."""
    seam = HttpSeam()
    controller = AbortController()
    replies = [Reply([b"{}"], headers={"content-type": "application/json"})]
    with WireServer([*replies, Reply(behaviour="no_headers")]) as server:
        client = seam.client(None)
        with guarded(controller.signal):
            assert client.post(f"{server.base_url}/a", content=b"{}").status_code == 200
        server.arrived.clear()
        failure: list[BaseException] = []

        def second() -> None:
            with guarded(controller.signal):
                try:
                    client.post(f"{server.base_url}/b", content=b"{}")
                except httpx.TransportError as error:
                    failure.append(error)

        worker = threading.Thread(target=second)
        worker.start()
        assert server.arrived.wait(5)
        time.sleep(0.05)  # let the client block in its read (not synchronisation of results)
        started = time.monotonic()
        controller.abort()
        worker.join(2)
        elapsed = time.monotonic() - started
    seam.close()
    assert not worker.is_alive()
    assert failure
    assert elapsed < 0.1
    assert server.requests[0]["peer"] == server.requests[1]["peer"]


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
