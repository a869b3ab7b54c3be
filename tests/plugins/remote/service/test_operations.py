"""What operators rely on: health, readiness, metrics without secrets, and recovery when the
database goes away and comes back."""

import re
import threading
import time

import pytest


def test_health_and_readiness_need_no_token(service):
    anonymous = service.client.as_token(None)
    origin = service.client.base.removesuffix("/backend-api/codex")
    client = anonymous.__class__(origin, service.tls, None)
    assert client.request("GET", "/healthz").json() == {"status": "ok"}
    assert client.request("GET", "/readyz").json() == {"status": "ready"}


def test_metrics_count_operations_and_name_no_account(service):
    service.call("notes", "write_file", {"path": "a.md", "text": "secret text"})
    service.call("notes", "read_file", {"path": "a.md"})
    service.client.as_token("bad").request("GET", "/models")
    origin = service.client.base.removesuffix("/backend-api/codex")
    text = service.client.__class__(origin, service.tls, None).request("GET", "/metrics").body
    text = text.decode()
    assert re.search(
        r'ctxmodes_serve_requests_total\{operation="notes.write_file",status="200"\} 1.0', text
    )
    assert re.search(
        r'ctxmodes_serve_request_seconds_count\{operation="notes.read_file"\} 1.0', text
    )
    assert re.search(r'operation="/backend-api/codex/models",status="401"', text)
    for secret in (service.alice.account_id, "secret text", service.client.token, "s1"):
        assert secret not in text


def _ready_within(operator, seconds):
    tick = threading.Event()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if operator.request("GET", "/readyz").status == 200:
            return True
        tick.wait(0.1)
    return False


def test_requests_fail_cleanly_while_postgres_is_down_and_recover(
    make_service, postgres_server, postgres_url, tmp_path
):
    from ctxmodes_remote.service.postgres_storage import PostgresStorage

    # A short wait for a connection, so the outage is reported quickly.
    service = make_service(storage=PostgresStorage(postgres_url, timeout_s=1))
    service.call("notes", "write_file", {"path": "kept.md", "text": "before"})
    origin = service.client.base.removesuffix("/backend-api/codex")
    operator = service.client.__class__(origin, service.tls, None)
    postgres_server.stop()
    try:
        down = service.alpha("notes", "write_file", {"path": "lost.md", "text": "x"})
        assert down.status == 503
        assert down.json()["error"]["code"] == "storage_unavailable"
        assert operator.request("GET", "/readyz").status == 503
        assert operator.request("GET", "/healthz").status == 200
    finally:
        postgres_server.start()
    # The same service process recovers by itself, once its pool's next reconnection
    # attempt (backed off during the outage) has run: within seconds, as a health check sees.
    assert _ready_within(operator, 30)
    assert service.call("notes", "read_file", {"path": "kept.md"})["file"]["content"] == "before"
    assert service.call("notes", "read_file", {"path": "lost.md"})["file"] is None
    service.call("notes", "write_file", {"path": "after.md", "text": "after"})
    assert service.call("notes", "read_file", {"path": "after.md"})["file"]["content"] == "after"


def test_a_read_only_database_refuses_writes_clearly_and_keeps_reads(make_service, postgres_url):
    import psycopg

    from ctxmodes_remote.service.postgres_storage import PostgresStorage

    service = make_service(storage=PostgresStorage(postgres_url, timeout_s=1))
    service.call("notes", "write_file", {"path": "kept.md", "text": "before"})
    name = postgres_url.rsplit("/", 1)[1]
    admin = postgres_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        # Sessions opened before the change keep their setting: end them.
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )
    refused = service.alpha("notes", "write_file", {"path": "new.md", "text": "x"})
    assert refused.status == 503
    assert refused.json()["error"]["code"] == "storage_unavailable"
    assert service.call("notes", "read_file", {"path": "kept.md"})["file"]["content"] == "before"
    assert service.call("notes", "read_file", {"path": "new.md"})["file"] is None


@pytest.mark.slow  # thousands of requests
def test_metric_labels_are_known_routes_only_whatever_the_requests(service):
    origin = service.client.base.removesuffix("/backend-api/codex")
    anonymous = service.client.__class__(origin, service.tls, None)
    intruder = service.client.as_token("not-a-token")
    for n in range(200):
        anonymous.request("GET", f"/probe-{n}")
        intruder.request("POST", f"/alpha/history{n}/v2/op{n}")
        intruder.request("POST", f"/alpha/notes/v2/write_file{n}")
    service.alpha("history", f"made_up_{n}", {})
    text = anonymous.request("GET", "/metrics").body.decode()
    labels = set(re.findall(r'operation="([^"]*)"', text))
    assert labels <= {"unmatched", "alpha.unknown", "/metrics"}
    assert re.search(r'operation="unmatched",status="401"\} 200.0', text)
    assert re.search(r'operation="alpha.unknown",status="401"\} 400.0', text)
    assert re.search(r'operation="alpha.unknown",status="404"\} 1.0', text)
    for n in (0, 199):
        assert f"probe-{n}" not in text
        assert f"op{n}" not in text
    assert len(text) < 20_000
