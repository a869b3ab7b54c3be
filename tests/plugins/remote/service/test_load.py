"""Bounded load and faults on loopback: 64 concurrent sessions of two accounts over two
``ctxmodes serve`` processes sharing one Postgres, with a scripted upstream."""

import asyncio
import base64
import json

import pytest
from support.serve_process import ServeProcess, create_token

from ctxmodes_remote.service.crypto import load_or_create_keyring
from ctxmodes_remote.service.loadgen import LoadAccount, run_load, summary, verify_writes

pytestmark = pytest.mark.slow

SESSIONS = 64
DURATION_S = 4.0


def account(token):
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return LoadAccount(token, claims["sub"])


@pytest.fixture
def team(tmp_path, tls, postgres_url):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "ok"}] * 20_000}))
    data = tmp_path / "data"
    accounts = [account(create_token(data, name, "--database", postgres_url)) for name in "ab"]
    keyring = load_or_create_keyring(data)
    services = [
        ServeProcess(
            f"scripted:{script}", data, tls, tmp_path / f"{n}.log", "--database", postgres_url
        )
        for n in range(2)
    ]
    yield services, accounts, keyring
    for service in services:
        if service.process.poll() is None:
            service.stop()


def load(team, tls, halfway=None):
    """One bounded run, its figures printed, and the acknowledged writes it could not find."""
    services, accounts, keyring = team
    context = tls.client_context()
    report = asyncio.run(
        run_load(
            [s.base for s in services],
            accounts,
            keyring,
            sessions=SESSIONS,
            duration_s=DURATION_S,
            ssl_context=context,
            halfway=halfway,
        )
    )
    print(summary(report))
    # Read back through the second process, which stays up in every run.
    lost = asyncio.run(
        verify_writes(services[1].base, accounts, keyring, report, ssl_context=context)
    )
    return report, lost


def test_load_has_no_errors_no_lost_writes_and_no_leaks(team, tls):
    services = team[0]
    report, lost = load(team, tls)
    assert report.errors == {}
    assert report.isolation_failures == 0
    assert set(report.latencies_ms) == {
        "notes.write_file",
        "notes.read_file",
        "notes.search_contents",
        "responses",
    }
    assert lost == []
    assert [s.stop() for s in services] == [0, 0]


def test_a_killed_process_loses_no_acknowledged_write(team, tls):
    services = team[0]

    async def kill_first():
        await asyncio.to_thread(services[0].kill)

    report, lost = load(team, tls, halfway=kill_first)
    assert report.isolation_failures == 0
    assert report.operations > 0
    assert lost == []
    assert services[1].stop() == 0
