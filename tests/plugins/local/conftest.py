"""Local mode on the real agent host with the scripted model.

Every host here is made by ``ctx_host``: a fresh plugin manager holding only
``ctxmodes_local`` and the core defaults (plus the plugins a test adds). Helpers live in
``support.local_rig``, importable from the tests.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ctxmodes_local
from ctxmodes.providers.base import ModelCapabilities, ModelInfo
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.testing.clock import SimulatedClock
from ctxmodes.testing.harness import HostHarness

LocalHost = Callable[..., HostHarness]


@pytest.fixture
def local(ctx_host: LocalHost) -> LocalHost:
    """Factory: ``local(responses, **options)`` starts a host running Local."""

    def make(responses: list[dict[str, Any]], **options: Any) -> HostHarness:
        plugins = [ctxmodes_local, *options.pop("plugins", ())]
        return ctx_host(responses, plugins=plugins, mode="local", **options)

    return make


@pytest.fixture
def local_over(ctx_host: LocalHost) -> Callable[..., HostHarness]:
    """Factory: ``local_over(transport, responses)`` starts Local on the scripted model
    presented as a model of another wire (``"codex"``, ``"responses"``).

    The model answers exactly as scripted; only the transport name and the capabilities the
    hooks see differ: Responses offers namespaced tools, Codex offers encrypted arguments.
    """

    def make(transport: str, responses: list[dict[str, Any]], **options: Any) -> HostHarness:
        capabilities = ModelCapabilities(
            namespaced_tools=transport == "responses",
            encrypted_tool_arguments=transport == "codex",
        )

        def info(self: ScriptedProvider) -> ModelInfo:
            return dataclasses.replace(ScriptedProvider.info.fget(self), capabilities=capabilities)  # type: ignore[attr-defined]

        subclass = type(
            f"ScriptedOver{transport.title()}",
            (ScriptedProvider,),
            {"transport": property(lambda self: transport), "info": property(info)},
        )
        clock = SimulatedClock()
        provider = subclass(Script.model_validate({"responses": responses}), clock=clock.now_ms)
        harness = ctx_host(
            responses,
            plugins=[ctxmodes_local],
            mode="local",
            provider=provider,
            clock=clock,
            **options,
        )
        assert harness.provider.transport == transport
        return harness

    return make


@pytest.fixture
def reopen(ctx_host: LocalHost) -> Callable[..., HostHarness]:
    """Factory: ``reopen(path, responses, **options)`` resumes the session file at ``path``
    in a new host running Local (the file's previous host must be closed)."""

    def make(path: Path, responses: list[dict[str, Any]], **options: Any) -> HostHarness:
        plugins = [ctxmodes_local, *options.pop("plugins", ())]
        harness = ctx_host(responses, plugins=plugins, mode="local", **options)
        harness.host.resume_session(path)
        return harness

    return make
