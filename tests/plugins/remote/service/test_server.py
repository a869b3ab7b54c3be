"""The event loop the service runs on: uvloop's where it is installed, asyncio's otherwise."""

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
