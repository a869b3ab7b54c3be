"""``ctxmodes serve`` as users run it: real processes, a real TLS listener on a port the OS
chooses, tokens from the command line, and a note that survives the process being killed."""

import json
import signal
import stat

import pytest
from support.serve_process import ServeProcess, create_token, ctxmodes
from support.service_rig import ENCRYPTED, ServiceClient

from ctxmodes_remote.service.crypto import load_or_create_keyring

pytestmark = pytest.mark.slow


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": [{"text": "hi"}]}))
    return path


def test_errors_are_one_line_and_non_zero(tmp_path):
    missing = ctxmodes("serve", "--data", str(tmp_path / "d"), check=False)
    assert missing.returncode == 1
    assert (
        missing.stderr == "ctxmodes: error: ctxmodes serve needs --upstream MODEL and --data DIR\n"
    )
    bad_model = ctxmodes(
        "serve", "--upstream", "nope:x", "--data", str(tmp_path / "d"), "--port", "0", check=False
    )
    assert bad_model.returncode == 1
    assert bad_model.stderr.startswith('ctxmodes: error: Model "nope:x" not found.')
    assert bad_model.stderr.count("\n") == 1
    half_tls = ctxmodes(
        "serve", "--upstream", "scripted:x", "--data", str(tmp_path), "--tls-cert", "c", check=False
    )
    assert half_tls.stderr == "ctxmodes: error: --tls-cert and --tls-key go together\n"
    no_timeout = ctxmodes(
        "serve",
        "--upstream",
        "scripted:x",
        "--data",
        str(tmp_path),
        "--upstream-timeout",
        "0",
        check=False,
    )
    assert no_timeout.returncode == 1
    assert no_timeout.stderr == (
        "ctxmodes: error: --upstream-timeout takes a number of seconds above 0\n"
    )
    for option, value, said in (
        ("--port", "99999", "--port takes a number from 0 to 65535"),  # not 99999 - 65536
        ("--port", "-1", "--port takes a number from 0 to 65535"),
        ("--idle-timeout", "inf", "--idle-timeout takes a number of seconds above 0"),
        ("--upstream-timeout", "nan", "--upstream-timeout takes a number of seconds above 0"),
    ):
        refused = ctxmodes(
            "serve", "--upstream", "scripted:x", "--data", str(tmp_path), option, value,
            check=False,
        )  # fmt: skip
        assert (refused.returncode, refused.stderr) == (1, f"ctxmodes: error: {said}\n")
    no_connections = ctxmodes(
        "serve",
        "--upstream",
        "scripted:x",
        "--data",
        str(tmp_path),
        "--database-connections",
        "0",
        check=False,
    )
    assert no_connections.returncode == 1
    assert no_connections.stderr == (
        "ctxmodes: error: --database-connections takes a number above 0\n"
    )


def test_token_create_and_a_served_request(tmp_path, tls, script):
    data = tmp_path / "data"
    token = create_token(data, "alice")
    again = create_token(data, "alice")
    assert token != again
    assert token.count(".") == 2
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    try:
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        for path in data.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
        assert service.base.startswith("https://127.0.0.1:")
        client = ServiceClient(service.base, tls, token)
        assert client.request("GET", "/models").json()["models"][0]["slug"] == "scripted"
        assert client.as_token(again).request("GET", "/models").status == 200
        assert client.as_token("x.y.z").request("GET", "/models").status == 401
    finally:
        assert service.stop() == 0
    # The log names requests, never a token.
    log = service.log.read_text()
    entries = [json.loads(line) for line in log.splitlines()]
    requests = [e for e in entries if e["message"] == "request"]
    assert {(e["method"], e["path"], e["status"]) for e in requests} == {
        ("GET", "/backend-api/codex/models", 200),
        ("GET", "/backend-api/codex/models", 401),
    }
    assert token not in log
    assert token.split(".")[2] not in log


def test_the_database_and_its_backup_are_owner_only_whatever_the_umask(tmp_path, tls, script):
    """Under a umask that lets everyone read new files, in a directory the user made
    readable by others: the database, its journal files, the key file and a `serve backup`
    copy are still the owner's alone."""
    import os

    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    previous = os.umask(0)
    try:
        create_token(data, "alice")
        service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
        try:
            ctxmodes("serve", "backup", "--data", str(data), "--to", str(tmp_path / "copy"))
            made = sorted(path.name for path in data.iterdir())
            assert {"master.keys", "ctxmodes-serve.sqlite3"} <= set(made)
            for path in [*data.iterdir(), tmp_path / "copy"]:
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
        finally:
            assert service.stop() == 0
    finally:
        os.umask(previous)


def test_an_acknowledged_note_survives_a_kill(tmp_path, tls, script):
    data = tmp_path / "data"
    token = create_token(data, "alice")
    keyring = load_or_create_keyring(data)
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    client = ServiceClient(service.base, tls, token)
    claims = json.loads(__import__("base64").urlsafe_b64decode(token.split(".")[1] + "=="))
    account = claims["sub"]
    context = {"session_id": "s1", "current_agent_name": "/root"}
    try:
        written = client.post_json(
            "/alpha/notes/v2/write_file",
            {"path": "c.md", "text": keyring.encrypt(account, b"durable"), "context": context},
            ENCRYPTED,
        )
        assert written.status == 200
    finally:
        service.process.send_signal(signal.SIGKILL)
        service.kill()
    restarted = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve2.log")
    try:
        client = ServiceClient(restarted.base, tls, token)
        read = client.post_json("/alpha/notes/v2/read_file", {"path": "c.md", "context": context})
        result = json.loads(keyring.decrypt(account, read.json()["encrypted_output"]))
        assert result["file"]["content"] == "durable"
    finally:
        assert restarted.stop() == 0


def test_a_mistyped_data_directory_is_an_error_and_nothing_is_made(tmp_path):
    """`token list`, `token revoke` and `backup` read what the service holds: a --data with
    no database is one error line, not a new empty database (whose empty listing, and then
    "successful" backup, would hide the typo)."""
    create_token(tmp_path / "data", "alice")
    typo = tmp_path / "dta"
    for args in (
        ("token", "list"),
        ("token", "revoke", "--account", "alice"),
        ("backup", "--to", str(tmp_path / "copy.sqlite3")),
    ):
        failed = ctxmodes("serve", *args, "--data", str(typo), check=False)
        assert failed.returncode == 1, args
        assert failed.stderr.count("\n") == 1, failed.stderr
        assert failed.stderr.startswith(f"ctxmodes: error: no service database in {typo}")
        assert not typo.exists()
    assert not (tmp_path / "copy.sqlite3").exists()
    listed = ctxmodes("serve", "token", "list", "--data", str(tmp_path / "data"))
    assert listed.stdout.splitlines()[1].split()[2:] == ["alice"]


def test_a_command_without_its_data_directory_is_one_line(tmp_path):
    for args in (
        ("token", "create", "alice"),
        ("token", "list"),
        ("token", "revoke", "--account", "alice"),
        ("key", "rotate"),
        ("backup", "--to", str(tmp_path / "copy.sqlite3")),
    ):
        failed = ctxmodes("serve", *args, check=False)
        command = " ".join(word for word in args[:2] if not word.startswith("-"))
        assert (failed.returncode, failed.stderr) == (
            1,
            f"ctxmodes: error: ctxmodes serve {command} needs --data DIR\n",
        )
    assert list(tmp_path.iterdir()) == []


def test_a_port_in_use_is_one_line(tmp_path, script):
    """Another process listening on the port: one line naming the address and why, status 1,
    no traceback."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failed = ctxmodes(
            "serve",
            "--upstream",
            f"scripted:{script}",
            "--data",
            str(tmp_path / "data"),
            "--port",
            str(port),
            check=False,
        )
    assert failed.returncode == 1
    assert failed.stderr.splitlines() == [
        f"ctxmodes: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


def test_an_empty_token_list_says_so(tmp_path):
    """Once every token is revoked, `token list` says there are none (on standard error,
    so that its standard output stays the rows alone) instead of printing nothing."""
    data = tmp_path / "data"
    create_token(data, "alice")
    ctxmodes("serve", "token", "revoke", "--account", "alice", "--data", str(data))
    listed = ctxmodes("serve", "token", "list", "--data", str(data))
    assert listed.stdout == ""
    assert listed.stderr == "no tokens (`ctxmodes serve token create NAME` issues one)\n"


def test_a_service_without_tokens_says_how_to_issue_one(tmp_path, tls, script):
    data = tmp_path / "data"
    logs = []
    for run in ("first", "after a token"):
        service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / f"{run}.log")
        assert service.stop() == 0
        logs.append([json.loads(line) for line in service.log.read_text().splitlines()])
        create_token(data, "alice")
    [warned] = [entry for entry in logs[0] if entry["level"] == "warning"]
    assert warned["message"] == (
        "no token issued yet, so every request is refused; issue one for each agent with "
        f"`ctxmodes serve token create NAME --data {data}`"
    )
    assert not [entry for entry in logs[1] if entry["level"] == "warning"]


def _handshake(port, *, oldest, newest):
    """The TLS version a client offering ``oldest``..``newest`` agrees on, or ``None``."""
    import socket
    import ssl
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # naming TLS 1.0 and 1.1 warns
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_ciphers("DEFAULT:@SECLEVEL=0")  # let this client speak the old versions
        context.minimum_version = oldest
        context.maximum_version = newest
    try:
        with context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10)) as s:
            return s.version()
    except ssl.SSLError:
        return None


def test_the_service_speaks_tls_1_2_or_newer_only(tmp_path, tls, script):
    import socket
    import ssl
    import threading
    import warnings

    old, tls11 = ssl.TLSVersion.MINIMUM_SUPPORTED, ssl.TLSVersion.TLSv1_1
    # This machine's TLS library can speak 1.1 at all: a server that allows it agrees on it,
    # so a refusal below is the service's.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        lax = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        lax.set_ciphers("DEFAULT:@SECLEVEL=0")
        lax.minimum_version = old
    lax.load_cert_chain(tls.cert, tls.key)
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def accept():
            connection, _ = listener.accept()
            try:
                lax.wrap_socket(connection, server_side=True).close()
            except (ssl.SSLError, OSError):
                connection.close()

        threading.Thread(target=accept, daemon=True).start()
        assert _handshake(listener.getsockname()[1], oldest=old, newest=tls11) == "TLSv1.1"

    service = ServeProcess(f"scripted:{script}", tmp_path / "data", tls, tmp_path / "serve.log")
    try:
        port = int(service.origin.rsplit(":", 1)[1])
        assert _handshake(port, oldest=old, newest=tls11) is None
        assert _handshake(port, oldest=old, newest=ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    finally:
        assert service.stop() == 0


def test_a_sigterm_as_soon_as_it_says_it_listens_stops_it_gracefully(tmp_path, tls, script):
    # A supervisor that stops the service right after reading its address: the service must
    # already handle SIGTERM (exit 0, after its shutdown), not die of the signal.
    for attempt in range(12):
        service = ServeProcess(
            f"scripted:{script}", tmp_path / "data", tls, tmp_path / f"serve{attempt}.log"
        )
        assert service.stop() == 0, f"attempt {attempt}"  # one SIGTERM, sent at once
