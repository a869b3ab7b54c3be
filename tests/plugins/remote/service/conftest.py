"""Fixtures of the service tests: TLS material and services on loopback ports with a
scripted upstream model (see :mod:`support.service_rig`)."""

from __future__ import annotations

import pytest
from support.service_rig import Service, make_tls


@pytest.fixture(scope="session")
def tls(tmp_path_factory):
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def make_service(tmp_path, tls):
    started = []

    def start(responses=(), **kwargs):
        service = Service(tmp_path / f"svc{len(started)}", tls, list(responses), **kwargs)
        started.append(service)
        return service

    yield start
    for service in started:
        service.close()


@pytest.fixture
def service(make_service):
    return make_service()


@pytest.fixture(scope="session")
def postgres_server():
    """A real Postgres 15 for the session; skips, saying why, only where none can start."""
    pytest.importorskip("psycopg", reason="Postgres tests need the postgres extra")
    from support.postgres_server import PostgresServer, postgres_bin

    if postgres_bin() is None:
        pytest.skip("Postgres is not installed (no initdb on PATH or in /usr/lib/postgresql)")
    server = PostgresServer()
    yield server
    server.close()


@pytest.fixture
def postgres_url(postgres_server):
    url = postgres_server.database()
    yield url
    postgres_server.drop(url)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    """A storage backend of each kind, empty: a SQLite file, a new database on the real
    Postgres."""
    from ctxmodes_remote.service.sqlite_storage import SqliteStorage
    from ctxmodes_remote.service.storage import open_storage

    if request.param == "sqlite":
        opened = SqliteStorage(tmp_path / "store.sqlite3")
    else:
        opened = open_storage(tmp_path, request.getfixturevalue("postgres_url"))
    yield opened
    opened.close()
