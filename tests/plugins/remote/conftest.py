"""Remote mode on the real agent host, its backend the emulator of the Codex contract.

Every host is made by ``ctx_host``: a fresh plugin manager holding only the Remote plugin
(plus the core defaults). The model is the scripted one presented on the Codex transport
(:class:`support.codex_backend.CodexDouble`); its backend calls go either through real
loopback sockets or in process through httpx's WSGI transport — the ``wire`` fixture runs
a test both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from support.codex_backend import Account, CodexBackendEmulator, CodexDouble, LoopbackServer

import ctxmodes_remote
from ctxmodes import hookimpl
from ctxmodes.modes import ModeSpec
from ctxmodes.providers.script import Script
from ctxmodes.testing.harness import HostHarness
from ctxmodes_remote.mode import remote_mode

RemoteHost = Callable[..., HostHarness]


@pytest.fixture
def emulator() -> CodexBackendEmulator:
    return CodexBackendEmulator()


@pytest.fixture
def account(emulator: CodexBackendEmulator) -> Account:
    return emulator.add_account("acct-alpha")


@pytest.fixture
def loopback(emulator: CodexBackendEmulator) -> Iterator[LoopbackServer]:
    server = LoopbackServer(emulator)
    yield server
    server.close()


@pytest.fixture(params=["loopback", "in-process"])
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class _RemoteWithTimeout:
    """The Remote plugin with a shorter backend deadline (a timeout test cannot wait 35 s)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    @hookimpl
    def ctx_register_modes(self, register: Callable[[ModeSpec], None]) -> None:
        register(
            ModeSpec(
                name=ctxmodes_remote.NAME,
                description="Remote with a short deadline",
                factory=lambda session: remote_mode(session, timeout=self.timeout),
            )
        )


@pytest.fixture
def remote(
    ctx_host: RemoteHost,
    emulator: CodexBackendEmulator,
    account: Account,
    request: pytest.FixtureRequest,
) -> RemoteHost:
    """Factory: ``remote(responses, wire=..., as_account=..., timeout=..., base_url=...,
    context_window=...)`` starts a host running Remote on the Codex double."""

    def make(
        responses: list[dict[str, Any]],
        *,
        wire: str = "in-process",
        as_account: Account | None = None,
        timeout: float | None = None,
        base_url: str | None = None,
        **options: Any,
    ) -> HostHarness:
        if wire == "loopback":
            server = request.getfixturevalue("loopback")
            url = base_url or server.base_url
            client = httpx.Client()
        else:
            url = base_url or "http://backend.test/backend-api/codex"
            client = httpx.Client(transport=httpx.WSGITransport(app=emulator))
        script_fields: dict[str, Any] = {"responses": responses}
        if "context_window" in options:
            script_fields["context_window"] = options.pop("context_window")
        script = Script.model_validate(script_fields)
        provider = CodexDouble(script, emulator, as_account or account, base_url=url, client=client)
        plugin: object = ctxmodes_remote if timeout is None else _RemoteWithTimeout(timeout)
        return ctx_host(responses, plugins=[plugin], mode="remote", provider=provider, **options)

    return make
