"""Graceful shutdown: a request in flight when the service stops still gets its whole answer,
and what it wrote is kept."""

import json
import socket
import threading

from support.service_rig import RecordingProvider, turn_headers

from ctxmodes.providers.script import Script
from ctxmodes_remote.service.sqlite_storage import SqliteStorage


class GatedProvider(RecordingProvider):
    """The scripted model, holding each answer until the test opens the gate."""

    def __init__(self, script):
        super().__init__(script)
        self.started = threading.Event()
        self.gate = threading.Event()

    def stream(self, request, signal):
        self.started.set()
        assert self.gate.wait(30)
        return super().stream(request, signal)


def test_a_stream_in_flight_finishes_during_shutdown(make_service):
    gated = GatedProvider(Script.model_validate({"responses": [{"text": "finished anyway"}]}))
    service = make_service(provider=gated)
    body = {
        "input": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "user",
                "content": [{"type": "input_text", "text": "slow task"}],
            }
        ]
    }
    replies = []
    request = threading.Thread(
        target=lambda: replies.append(service.responses(body, turn_headers("s1", "w0")))
    )
    request.start()
    assert gated.started.wait(30)
    closing = threading.Thread(target=service.server.close)
    closing.start()
    # Once the listener refuses new connections the service is stopping; only then does
    # the upstream answer.
    while _accepts(service.server.port):
        assert closing.is_alive()
    gated.gate.set()
    request.join(60)
    closing.join(60)
    [reply] = replies
    assert reply.status == 200
    events = reply.events()
    assert events[-1]["type"] == "response.completed"
    assert "finished anyway" in reply.body.decode()
    # The exchange was recorded before the engine closed.
    reopened = SqliteStorage.in_directory(service.tmp_path / "data")
    roles = [
        item.role for _, item in reopened.history_items(service.alice.account_id, "s1", "/root")
    ]
    reopened.close()
    assert roles == ["user", "assistant"]


def _accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError:
        return False
    return True


class NeverAnswering(RecordingProvider):
    """An upstream that answers only when its call is aborted."""

    def __init__(self, script):
        super().__init__(script)
        self.aborted = threading.Event()

    def stream(self, request, signal):
        if signal.wait(60):
            self.aborted.set()
        return super().stream(request, signal)


def test_a_client_that_gives_up_aborts_the_upstream_call(make_service):
    upstream = NeverAnswering(Script.model_validate({"responses": [{"text": "too late"}]}))
    service = make_service(provider=upstream)
    context = service.tls.client_context()
    body = json.dumps({"input": []}).encode()
    headers = {"Authorization": f"Bearer {service.client.token}", **turn_headers("s1", "w0")}
    with (
        socket.create_connection(("127.0.0.1", service.server.port)) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls_socket,
    ):
        lines = [
            "POST /backend-api/codex/responses HTTP/1.1",
            "Host: 127.0.0.1",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        tls_socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        # The stream has started once the first event arrives.
        received = b""
        while b"response.created" not in received:
            chunk = tls_socket.recv(65536)
            assert chunk, received
            received += chunk
    # The client is gone: the upstream call is aborted, not left to run.
    assert upstream.aborted.wait(30)
    assert len(upstream.requests) == 1
