"""The event loop the service runs on (uvloop's where it is installed, asyncio's otherwise), and
how often its threads hand the interpreter on."""

import asyncio
import sys

import pytest

from ctxmodes_remote.service.server import loop_factory


def test_the_service_runs_on_uvloop_where_it_is_installed():
    uvloop = pytest.importorskip("uvloop")
    loop = loop_factory()()
    try:
        assert isinstance(loop, uvloop.Loop)
        assert loop.run_until_complete(asyncio.sleep(0, "ran")) == "ran"
    finally:
        loop.close()


def test_without_uvloop_the_service_runs_on_asyncios_loop(monkeypatch):
    # A module set to None in sys.modules fails to import, as one not installed does.
    monkeypatch.setitem(sys.modules, "uvloop", None)
    loop = loop_factory()()
    try:
        assert isinstance(loop, asyncio.BaseEventLoop)
        assert loop.run_until_complete(asyncio.sleep(0, "ran")) == "ran"
    finally:
        loop.close()


@pytest.mark.parametrize("database", ["postgresql://localhost/notes", None])
def test_on_postgres_the_service_hands_the_interpreter_on_often_while_it_runs(
    monkeypatch, tmp_path, database
):
    # Worker threads search and decrypt while the loop answers other accounts' calls: at
    # Python's own 5 ms a call could wait that long behind one account's heavy search. On
    # SQLite the extra hand-overs cost writes, and Python's interval stays.
    from ctxmodes_remote.service import server

    seen = []

    class Runner:
        def __init__(self, loop_factory):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            return False

        def run(self, coroutine):
            coroutine.close()
            seen.append(sys.getswitchinterval())

    before = sys.getswitchinterval()
    monkeypatch.setattr(server.logs, "configure", lambda: None)
    monkeypatch.setattr(server.asyncio, "Runner", Runner)
    config = server.ServerConfig("scripted", tmp_path, database, "127.0.0.1", 0)
    server.run_server(config)
    assert seen == [pytest.approx(server.SWITCH_INTERVAL_S if database else before)]
    assert before > server.SWITCH_INTERVAL_S
    assert sys.getswitchinterval() == pytest.approx(before)  # as it was, once it ends
