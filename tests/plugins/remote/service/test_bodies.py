"""Request bodies and connections cost bounded memory and time: compression bombs are refused
at the size limit without being decompressed whole, and idle or stalled connections close."""

import json
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

import pytest
from support.serve_process import ServeProcess, create_token
from support.service_rig import turn_headers

# Compression bombs and stalled bodies: the fault tier, outside `make check`.
pytestmark = pytest.mark.faults

zstd = pytest.importorskip("backports.zstd", reason="zstd needs the serve extra on Python < 3.14")

#: The service's default body limit (``MAX_BODY_BYTES``).
LIMIT = 64 * 1024 * 1024
MB = 1024 * 1024


def peak_rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def bomb(decompressed):
    compressor = zstd.ZstdCompressor()
    return compressor.compress(b'{"input": "' + b" " * decompressed) + compressor.flush()


def test_zstd_bombs_are_refused_within_the_limits_memory(tmp_path, tls):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "never"}]}))
    data = tmp_path / "data"
    token = create_token(data, "alice")
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    try:
        address = urlsplit(service.base)
        payload = bomb(1024 * MB)
        assert len(payload) < 100_000

        def send(statuses):
            context = ssl.create_default_context(cafile=str(tls.ca))
            import http.client

            connection = http.client.HTTPSConnection(
                address.hostname, address.port, context=context, timeout=120
            )
            headers = {
                "Authorization": f"Bearer {token}",
                "Content-Encoding": "zstd",
                "Content-Type": "application/json",
            }
            connection.request("POST", f"{address.path}/responses", payload, headers)
            reply = connection.getresponse()
            statuses.append((reply.status, reply.read()))
            connection.close()

        before = peak_rss(service.process.pid)
        statuses = []
        send(statuses)
        one = peak_rss(service.process.pid) - before
        threads = [threading.Thread(target=send, args=(statuses,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        four = peak_rss(service.process.pid) - before
        assert [status for status, _ in statuses] == [413] * 5
        assert b"decompresses past" in statuses[0][1]
        # Each bomb would be 1 GiB decompressed; a request holds at most the limit.
        assert one < LIMIT + 48 * MB, one
        assert four < 4 * LIMIT + 96 * MB, four
    finally:
        service.stop()


def test_gzip_and_deflate_bodies_decode_and_unknown_encodings_are_refused(make_service):
    import zlib

    service = make_service([{"text": "one"}, {"text": "two"}])
    raw = json.dumps(
        {"input": [{"type": "message", "role": "user", "content": "hi"}], "stream": True}
    ).encode()
    deflate = zlib.compressobj(wbits=zlib.MAX_WBITS)
    gzip = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    for encoding, compressor in (("gzip", gzip), ("deflate", deflate)):
        body = compressor.compress(raw) + compressor.flush()
        reply = service.client.request(
            "POST",
            "/responses",
            body,
            {"Content-Encoding": encoding, **turn_headers("s1", "w0")},
        )
        assert reply.status == 200, reply.body
    for encoding, body in (("br", raw), ("zstd", b"not zstd at all")):
        reply = service.client.request(
            "POST", "/responses", body, {"Content-Encoding": encoding, **turn_headers("s1", "w0")}
        )
        assert reply.status == 415
        assert reply.body.decode().strip()


def _connect(service):
    context = service.tls.client_context()
    raw = socket.create_connection(("127.0.0.1", service.server.port), timeout=10)
    return context.wrap_socket(raw, server_hostname="localhost")


def _closed_within(connection, seconds):
    start = time.monotonic()
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
    except TimeoutError:
        return None
    except (ConnectionResetError, ssl.SSLError):
        pass
    return time.monotonic() - start


def test_idle_and_half_sent_requests_are_closed_after_the_idle_timeout(make_service):
    service = make_service(idle_timeout_s=1.0)
    silent = _connect(service)
    half_headers = _connect(service)
    half_headers.sendall(b"POST /backend-api/codex/responses HTTP/1.1\r\nHost: x\r\n")
    for connection in (silent, half_headers):
        waited = _closed_within(connection, 10)
        assert waited is not None, "the connection was kept open"
        assert waited < 5
        connection.close()


def test_a_body_that_stops_arriving_gets_408(make_service):
    service = make_service(idle_timeout_s=1.0)
    connection = _connect(service)
    request = (
        "POST /backend-api/codex/alpha/notes/v2/read_file HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {service.client.token}\r\n"
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"context":'
    )
    connection.sendall(request.encode())
    connection.settimeout(10)
    answer = connection.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    connection.close()
