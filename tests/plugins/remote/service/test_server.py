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


def test_once_listening_the_service_leaves_what_start_up_made_out_of_full_collections(
    tmp_path, capsys
):
    # A full pass of the collector walks every object it tracks while every request waits:
    # the modules, app and pools made at start-up would be most of them.
    import gc

    from ctxmodes_remote.service import server

    script = tmp_path / "script.json"
    script.write_text('{"responses": []}')
    config = server.ServerConfig(f"scripted:{script}", tmp_path, None, "127.0.0.1", 0)

    async def serve_until_listening():
        task = asyncio.create_task(server._serve(config))
        while "listening on" not in capsys.readouterr().out:
            assert not task.done(), task.exception()
            await asyncio.sleep(0.01)
        frozen = gc.get_freeze_count()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return frozen

    gc.unfreeze()
    try:
        frozen = asyncio.run(serve_until_listening())
    finally:
        gc.unfreeze()
    assert frozen > 10_000
