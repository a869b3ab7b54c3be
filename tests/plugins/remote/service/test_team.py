"""The service run for a team: several processes on one Postgres, keys rotated while they
run, backups restored into a fresh database."""

import json
import shutil
import signal
import subprocess

import pytest
from support.serve_process import ServeProcess, create_token, ctxmodes
from support.service_rig import ENCRYPTED, ServiceClient

from ctxmodes_remote.service.codex_home import account_of
from ctxmodes_remote.service.crypto import CiphertextError, load_or_create_keyring
from ctxmodes_remote.service.sqlite_storage import DATABASE_NAME

pytestmark = pytest.mark.slow

CONTEXT = {"session_id": "team-session", "current_agent_name": "/root"}


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"responses": []}))
    return path


def write(client, keyring, account, path, text):
    sealed = keyring.encrypt(account, text.encode())
    reply = client.post_json(
        "/alpha/notes/v2/write_file", {"path": path, "text": sealed, "context": CONTEXT}, ENCRYPTED
    )
    assert reply.status == 200, reply.body
    return reply.json()["encrypted_output"]


def read(client, keyring, account, path):
    reply = client.post_json("/alpha/notes/v2/read_file", {"path": path, "context": CONTEXT})
    assert reply.status == 200, reply.body
    return json.loads(keyring.decrypt(account, reply.json()["encrypted_output"]))["file"]


def test_two_processes_on_one_postgres_answer_alike(tmp_path, tls, script, postgres_url):
    data = tmp_path / "data"
    token = create_token(data, "team", "--database", postgres_url)
    account = account_of(token)
    keyring = load_or_create_keyring(data)
    first = ServeProcess(
        f"scripted:{script}", data, tls, tmp_path / "a.log", "--database", postgres_url
    )
    second = ServeProcess(
        f"scripted:{script}", data, tls, tmp_path / "b.log", "--database", postgres_url
    )
    try:
        a = ServiceClient(first.base, tls, token)
        b = ServiceClient(second.base, tls, token)
        assert read(b, keyring, account, "plan.md") is None
        write(a, keyring, account, "plan.md", "written through a")
        assert read(b, keyring, account, "plan.md")["content"] == "written through a"
        write(b, keyring, account, "plan.md", "then through b")
        assert read(a, keyring, account, "plan.md")["content"] == "then through b"
    finally:
        assert first.stop() == 0
        assert second.stop() == 0


def test_keys_rotate_while_the_service_runs(tmp_path, tls, script):
    data = tmp_path / "data"
    token = create_token(data, "alice")
    account = account_of(token)
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    try:
        client = ServiceClient(service.base, tls, token)
        old_keys = load_or_create_keyring(data)
        old_output = write(client, old_keys, account, "a.md", "before rotation")
        ctxmodes("serve", "key", "rotate", "--data", str(data))
        service.process.send_signal(signal.SIGHUP)
        new_keys = load_or_create_keyring(data)
        # Wait for the reload the way a client would notice it: outputs under the new key.
        for _ in range(200):
            output = client.post_json(
                "/alpha/notes/v2/read_file", {"path": "a.md", "context": CONTEXT}
            ).json()["encrypted_output"]
            try:
                old_keys.decrypt(account, output)
            except CiphertextError:
                break
        else:
            pytest.fail("the running service never switched to the new key")
        assert json.loads(new_keys.decrypt(account, output))["file"]["content"] == "before rotation"
        # Values made under the old key are still accepted.
        assert json.loads(new_keys.decrypt(account, old_output))["file"]["path"].endswith("a.md")
        sealed_old = old_keys.encrypt(account, b"old-key text")
        reply = client.post_json(
            "/alpha/notes/v2/write_file",
            {"path": "b.md", "text": sealed_old, "context": CONTEXT},
            ENCRYPTED,
        )
        assert reply.status == 200
        assert read(client, new_keys, account, "b.md")["content"] == "old-key text"
    finally:
        assert service.stop() == 0
    # The SIGHUP re-wrapped the account's storage keys under the new master key: with the
    # old one dropped from the file now, a process starts and no stored data is lost.
    keys = data / "master.keys"
    keys.write_text(keys.read_text().splitlines()[0] + "\n")
    dropped = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "dropped.log")
    try:
        client = ServiceClient(dropped.base, tls, token)
        newest_only = load_or_create_keyring(data)
        assert newest_only.key_count == 1
        assert read(client, newest_only, account, "a.md")["content"] == "before rotation"
        assert read(client, newest_only, account, "b.md")["content"] == "old-key text"
    finally:
        assert dropped.stop() == 0


def _logged(service, text, count):
    """Wait until the service's log holds ``count`` lines whose message holds ``text``."""
    import threading

    tick = threading.Event()
    for _ in range(300):
        messages = [json.loads(line)["message"] for line in service.log.read_text().splitlines()]
        if sum(text in message for message in messages) >= count:
            return messages
        tick.wait(0.05)
    pytest.fail(f"the service never logged {text!r} {count} time(s)")


def test_a_sighup_never_makes_a_key_nor_loads_a_key_file_it_must_refuse(tmp_path, tls, script):
    data = tmp_path / "data"
    token = create_token(data, "alice")
    account = account_of(token)
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    keys = data / "master.keys"
    kept = tmp_path / "master.keys.kept"
    try:
        client = ServiceClient(service.base, tls, token)
        keyring = load_or_create_keyring(data)
        write(client, keyring, account, "a.md", "before the reload")
        # The key file lost: the reload is refused, and no new key takes the old one's place.
        keys.rename(kept)
        service.process.send_signal(signal.SIGHUP)
        messages = _logged(service, "keys not reloaded", 1)
        assert any(str(keys) in message for message in messages)
        assert not keys.exists()
        assert read(client, keyring, account, "a.md")["content"] == "before the reload"
        # A key file others can read: refused on reload as at start.
        kept.rename(keys)
        keys.chmod(0o644)
        service.process.send_signal(signal.SIGHUP)
        messages = _logged(service, "keys not reloaded", 2)
        assert "owner-only" in [m for m in messages if "keys not reloaded" in m][-1]
        assert read(client, keyring, account, "a.md")["content"] == "before the reload"
        keys.chmod(0o600)
    finally:
        assert service.stop() == 0
    assert not any("keys reloaded" in m for m in messages)


def test_sqlite_backup_restores_every_note(tmp_path, tls, script):
    data = tmp_path / "data"
    token = create_token(data, "alice")
    account = account_of(token)
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    keyring = load_or_create_keyring(data)
    notes = {f"n{number}.md": f"note {number}" for number in range(20)}
    try:
        client = ServiceClient(service.base, tls, token)
        for path, text in notes.items():
            write(client, keyring, account, path, text)
        # Taken while the service runs.
        ctxmodes("serve", "backup", "--data", str(data), "--to", str(tmp_path / "backup.sqlite3"))
    finally:
        assert service.stop() == 0
    fresh = tmp_path / "restored"
    fresh.mkdir(mode=0o700)
    shutil.copy2(tmp_path / "backup.sqlite3", fresh / "ctxmodes-serve.sqlite3")
    shutil.copy2(data / "master.keys", fresh / "master.keys")
    restored = ServeProcess(f"scripted:{script}", fresh, tls, tmp_path / "restored.log")
    try:
        client = ServiceClient(restored.base, tls, token)
        for path, text in notes.items():
            assert read(client, keyring, account, path)["content"] == text
    finally:
        assert restored.stop() == 0


def test_postgres_backup_restores_into_a_fresh_database(
    tmp_path, tls, script, postgres_server, postgres_url
):
    from support.postgres_server import postgres_bin

    data = tmp_path / "data"
    token = create_token(data, "alice", "--database", postgres_url)
    account = account_of(token)
    keyring = load_or_create_keyring(data)
    service = ServeProcess(
        f"scripted:{script}", data, tls, tmp_path / "a.log", "--database", postgres_url
    )
    try:
        client = ServiceClient(service.base, tls, token)
        for number in range(10):
            write(client, keyring, account, f"n{number}.md", f"note {number}")
    finally:
        assert service.stop() == 0
    dump = tmp_path / "db.dump"
    binaries = postgres_bin()
    subprocess.run(
        [str(binaries / "pg_dump"), "--format=custom", "--file", str(dump), postgres_url],
        check=True,
        timeout=120,
    )
    target = postgres_server.database()
    subprocess.run(
        [str(binaries / "pg_restore"), "--no-owner", "--dbname", target, str(dump)],
        check=True,
        timeout=120,
    )
    restored = ServeProcess(
        f"scripted:{script}", data, tls, tmp_path / "b.log", "--database", target
    )
    try:
        client = ServiceClient(restored.base, tls, token)
        for number in range(10):
            assert read(client, keyring, account, f"n{number}.md")["content"] == f"note {number}"
    finally:
        assert restored.stop() == 0


def _first_commands(script, data, database):
    """What a newcomer runs first against ``database``: ``token create``, then ``serve``."""
    return (
        ("serve", "token", "create", "alice", "--data", str(data), "--database", database),
        ("serve", "--upstream", f"scripted:{script}", "--data", str(data), "--port", "0",
         "--database", database),
    )  # fmt: skip


def _serve_refused(script, data, database):
    return ctxmodes(*_first_commands(script, data, database)[1], check=False)


def test_a_process_with_another_key_file_refuses_to_start_before_any_data(
    tmp_path, tls, script, postgres_url
):
    # A second machine set up with its own key file instead of a copy of the first's: it
    # would wrap new accounts' keys under its key, and each process would then refuse the
    # other's accounts. The database records the first key, so the second stops at once.
    first_data, second_data = tmp_path / "first", tmp_path / "second"
    create_token(first_data, "alice", "--database", postgres_url)
    first = ServeProcess(
        f"scripted:{script}", first_data, tls, tmp_path / "a.log", "--database", postgres_url
    )
    try:
        second_data.mkdir(mode=0o700)
        load_or_create_keyring(second_data)
        refused = _serve_refused(script, second_data, postgres_url)
        assert refused.returncode == 1
        assert refused.stderr == (
            "ctxmodes: error: master.keys opens none of this database's data: it was "
            "encrypted under other master keys (start with the key file it was made with; "
            "every process needs the same one)\n"
        )
        shutil.rmtree(second_data)
        second_data.mkdir(mode=0o700)
        missing = _serve_refused(script, second_data, postgres_url)
        assert missing.returncode == 1
        assert missing.stderr == (
            f"ctxmodes: error: {second_data / 'master.keys'} is missing, and the database is "
            "encrypted under it: copy it from another process of this service, or restore it\n"
        )
        assert not (second_data / "master.keys").exists(), "no key of its own may be made"
        # The copy the page asks for starts.
        shutil.copy2(first_data / "master.keys", second_data / "master.keys")
        second = ServeProcess(
            f"scripted:{script}", second_data, tls, tmp_path / "b.log", "--database", postgres_url
        )
        assert second.stop() == 0
    finally:
        assert first.stop() == 0


def test_postgres_without_a_usable_psycopg_is_one_line(tmp_path, script, postgres_url):
    # psycopg's own ImportError when it loads no libpq names no module; PSYCOPG_IMPL asks
    # for an implementation that is not installed, which fails the same way.
    no_libpq = {"PSYCOPG_IMPL": "c"}
    data = tmp_path / "data"
    for args in _first_commands(script, data, postgres_url):
        refused = ctxmodes(*args, check=False, env=no_libpq)
        assert refused.returncode == 1
        assert refused.stderr == (
            "ctxmodes: error: Postgres storage needs its extra (couldn't import requested "
            "psycopg 'c' implementation: No module named 'psycopg_c'): "
            "pip install 'ctxmodes[postgres]'\n"
        )


def test_a_role_that_may_not_create_the_tables_is_told_what_to_grant(
    tmp_path, script, postgres_server, postgres_url
):
    import psycopg

    # The newcomer's database: made by the administrator, the service's role only given
    # CREATE on it, which on Postgres 15 does not let it create tables in the public schema.
    database = postgres_url.rsplit("/", 1)[1]
    role = f"{database}_service"
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'GRANT CREATE ON DATABASE "{database}" TO "{role}"')
    url = f"postgresql://{role}@127.0.0.1:{postgres_server.port}/{database}"
    expected = (
        f"ctxmodes: error: cannot use the database: role {role} may not create the service's "
        f"tables in database {database} (permission denied for schema public); make a "
        f"database the role owns (CREATE DATABASE … OWNER {role}), or GRANT CREATE ON SCHEMA "
        f"public TO {role}\n"
    )
    try:
        data = tmp_path / "data"
        for args in _first_commands(script, data, url):
            refused = ctxmodes(*args, check=False)
            assert refused.returncode == 1
            assert refused.stderr == expected
        # What the line says to do is enough.
        with psycopg.connect(postgres_url, autocommit=True) as owner:
            owner.execute(f'GRANT CREATE ON SCHEMA public TO "{role}"')
        assert create_token(data, "alice", "--database", url).count(".") == 2
    finally:
        postgres_server.drop(postgres_url)
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
            admin.execute(f'DROP ROLE "{role}"')


def test_serve_backup_on_a_postgres_service_says_how_to_back_it_up(tmp_path, postgres_url):
    # The newcomer's guess: the data directory of a Postgres service holds only master.keys.
    data = tmp_path / "data"
    create_token(data, "alice", "--database", postgres_url)
    to = tmp_path / "copy.sqlite3"
    told = (
        "serve backup copies a service's SQLite database; back up a service on Postgres with "
        "pg_dump --format=custom URL > FILE\n"
    )
    with_url = ctxmodes(
        "serve", "backup", "--data", str(data), "--database", postgres_url, "--to", str(to),
        check=False,
    )  # fmt: skip
    assert (with_url.returncode, with_url.stderr) == (1, f"ctxmodes: error: {told}")
    without = ctxmodes("serve", "backup", "--data", str(data), "--to", str(to), check=False)
    assert (without.returncode, without.stderr) == (
        1,
        f"ctxmodes: error: no service database in {data}; {told}",
    )
    assert not to.exists()
    assert sorted(path.name for path in data.iterdir()) == []


def test_data_and_database_may_come_before_the_command(tmp_path, postgres_url):
    # `ctxmodes serve --database URL token create NAME` reads as the server's own options
    # followed by a command; before, the command's defaults replaced them, and the token went
    # into a new SQLite database beside the key file instead of the team's Postgres.
    data = tmp_path / "data"
    ctxmodes("serve", "--database", postgres_url, "token", "create", "alice", "--data", str(data))
    ctxmodes("serve", "--data", str(data), "--database", postgres_url, "token", "create", "bob")
    assert not (data / DATABASE_NAME).exists()
    listed = ctxmodes("serve", "--data", str(data), "--database", postgres_url, "token", "list")
    assert sorted(row.split()[2] for row in listed.stdout.splitlines()[1:]) == ["alice", "bob"]
    revoked = ctxmodes(
        "serve", "--data", str(data), "--database", postgres_url, "token", "revoke",
        "--account", "bob",
    )  # fmt: skip
    assert revoked.stderr.startswith("revoked 1 token(s)")
    listed = ctxmodes("serve", "token", "list", "--data", str(data), "--database", postgres_url)
    assert [row.split()[2] for row in listed.stdout.splitlines()[1:]] == ["alice"]
