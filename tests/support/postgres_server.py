"""A real Postgres server for the storage tests: initialised in a temporary directory, owned
by the ``postgres`` user when the tests run as root (``initdb`` refuses root), listening on
127.0.0.1 at a port the OS chose, trusting local connections. Stopped by ``pg_ctl`` on its own
data directory, never by name.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any


def postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One server; :meth:`database` hands out fresh databases on it."""

    def __init__(self) -> None:
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("Postgres is not installed (no initdb)")
        self._bin = binaries
        self._root = Path(tempfile.mkdtemp(prefix="ctxmodes-pg-"))
        self.data = self._root / "data"
        self.socket_dir = self._root / "sock"
        self.socket_dir.mkdir()
        self._user: str | None = None
        if os.geteuid() == 0:
            self._user = "postgres"
            owner = pwd.getpwnam("postgres")
            os.chown(self._root, owner.pw_uid, owner.pw_gid)
            os.chown(self.socket_dir, owner.pw_uid, owner.pw_gid)
        self.port = _free_port()
        self._names = itertools.count()
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
        self.start()

    def _run(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self._bin / tool), *args]
        if self._user is not None:
            command = ["runuser", "-u", self._user, "--", *command]
        return subprocess.run(
            command, check=True, capture_output=True, text=True, cwd=self._root, timeout=120
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 "
            "-c fsync=on -c max_connections=200"
        )
        self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self._root / "log"),
            "-w",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def postmaster_pid(self) -> int:
        """The server's main process (its backends are its children)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def database(self) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def dump(self, url: str) -> bytes:
        """``pg_dump`` of the database at ``url``, as plain SQL."""
        command = [str(self._bin / "pg_dump"), "--no-owner", url]
        return subprocess.run(command, check=True, capture_output=True, timeout=120).stdout

    def drop(self, url: str) -> None:
        """Drop a database :meth:`database` made, ending its connections: a run makes one per
        test, and a data directory holding them all makes stopping the server slow."""
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self._root, ignore_errors=True)


def schema_of_version(connection: Any, version: int) -> None:
    """Give an empty database the service's schema as its first ``version`` migrations
    left it (a database of an older ctxmodes, to be migrated)."""
    from ctxmodes_remote.service.postgres_storage import MIGRATIONS

    connection.execute(
        "CREATE TABLE schema_migrations ("
        "version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    for number, statements in MIGRATIONS[:version]:
        connection.execute(statements)
        connection.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (number,))
