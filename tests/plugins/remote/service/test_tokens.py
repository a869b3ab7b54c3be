"""``serve token list`` and ``serve token revoke`` as real processes, against two running
service processes sharing one database (SQLite and Postgres): a revoked token is refused by
every process within the documented bound (a process keeps a token it found for at most
``TOKEN_CACHE_S`` seconds)."""

import hashlib
import json
import re
import threading

import pytest
from support.serve_process import ServeProcess, create_token, ctxmodes
from support.service_rig import ServiceClient

from ctxmodes_remote.service.accounts import TOKEN_CACHE_S

pytestmark = pytest.mark.slow


@pytest.fixture(params=["sqlite", "postgres"])
def database(request):
    if request.param == "sqlite":
        return ()
    return ("--database", request.getfixturevalue("postgres_url"))


def test_tokens_are_listed_without_secrets_and_revoked_on_every_process(tmp_path, tls, database):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"text": "hi"}]}))
    data = tmp_path / "data"
    alice = create_token(data, "alice", *database)
    alice_again = create_token(data, "alice", *database)
    bob = create_token(data, "bob", *database)

    listed = ctxmodes("serve", "token", "list", "--data", str(data), *database).stdout
    header, *lines = listed.splitlines()
    assert header.split() == ["ID", "CREATED", "ACCOUNT"]
    rows = [line.split() for line in lines]
    # The columns line up under their names.
    assert {line.index(row[1]) for line, row in zip(lines, rows, strict=True)} == {
        header.index("CREATED")
    }
    assert sorted(row[2] for row in rows) == ["alice", "alice", "bob"]
    # Each id is the start of its token's hash, never the token.
    issued = (alice, alice_again, bob)
    assert sorted(row[0] for row in rows) == sorted(
        hashlib.sha256(token.encode()).hexdigest()[:16] for token in issued
    )
    for token in (alice, alice_again, bob):
        assert token not in listed
        assert token.rsplit(".", 1)[-1] not in listed

    services = [
        ServeProcess(f"scripted:{script}", data, tls, tmp_path / f"serve{n}.log", *database)
        for n in range(2)
    ]
    try:

        def status(service, token):
            client = ServiceClient(service.base, tls, token)
            return client.request("GET", "/models").status

        for service in services:
            assert [status(service, t) for t in (alice, alice_again, bob)] == [200, 200, 200]

        # The id of bob's token, as the create command and the list name it.
        made = ctxmodes("serve", "token", "create", "bob", "--data", str(data), *database)
        second_bob = made.stdout.strip()
        [bob_id] = re.findall(r"token id ([0-9a-f]{16})", made.stderr)
        for service in services:
            # Both processes now hold the token in memory.
            assert status(service, second_bob) == 200
        revoked = ctxmodes("serve", "token", "revoke", bob_id, "--data", str(data), *database)
        # Said as it is: a process that found the token keeps it for up to 2 seconds.
        assert revoked.stderr == "revoked 1 token(s); every process refuses them within 2 seconds\n"
        threading.Event().wait(TOKEN_CACHE_S)
        for service in services:
            assert status(service, second_bob) == 401
            assert status(service, bob) == 200

        by_account = ctxmodes(
            "serve", "token", "revoke", "--account", "alice", "--data", str(data), *database
        )
        assert by_account.stderr.startswith("revoked 2 token(s); ")
        threading.Event().wait(TOKEN_CACHE_S)
        for service in services:
            assert [status(service, t) for t in (alice, alice_again, bob)] == [401, 401, 200]
        remaining = ctxmodes("serve", "token", "list", "--data", str(data), *database).stdout
        assert [line.split()[2] for line in remaining.splitlines()[1:]] == ["bob"]
    finally:
        for service in services:
            service.stop()

    for args, message in (
        (("revoke", bob_id), f"no token has the id {bob_id}"),
        (("revoke", "xyz"), "a token id is 16 hex digits"),
        (("revoke", "--account", "carol"), "no account is named 'carol'"),
        (("revoke",), "takes a token id or --account NAME"),
    ):
        failed = ctxmodes("serve", "token", *args, "--data", str(data), *database, check=False)
        assert failed.returncode == 1
        assert message in failed.stderr
        assert failed.stderr.count("\n") == 1
