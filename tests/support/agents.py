"""The one agent builder of the tests that drive ctxmodes as a program does (the embedding
API, the terminal, the export's sessions): an :func:`~ctxmodes.sdk.open_agent` agent on a new
session in a test's directory, answered by the scripted model. Tests of the host itself use
the ``make_rig`` fixture (a :class:`~ctxmodes.testing.HostHarness`) instead."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from ctxmodes import ForkRequest, SessionChangeDecision, hookimpl
from ctxmodes.config import Settings
from ctxmodes.host.options import HostOptions
from ctxmodes.providers import Provider, Script, ScriptedProvider
from ctxmodes.sdk import Agent, open_agent
from support.host_rig import ToolsPlugin


def make_agent(
    directory: Path,
    responses: list[dict[str, Any]],
    *tools: Any,
    mode: str = "off",
    provider: Provider | None = None,
    options: HostOptions | None = None,
    durability: Literal["none", "flush", "fsync"] = "flush",
    plugins: Sequence[object] = (),
) -> Agent:
    """An agent in ``mode`` on a new session under ``directory``, answering with
    ``responses`` (streamed four characters at a time) unless ``provider`` is given; ``tools``
    are registered beside the built-in ones, and ``plugins`` with them."""
    if provider is None:
        provider = ScriptedProvider(Script.model_validate({"responses": responses}), chunk_chars=4)
    return open_agent(
        cwd=directory,
        settings=Settings(mode=mode, durability=durability),
        provider=provider,
        session_dir=directory / "sessions",
        options=options,
        plugins=[*([ToolsPlugin(*tools)] if tools else []), *plugins],
    )


class ForkKeeper:
    """A plugin that keeps the session on every fork (and clone), recording each request."""

    def __init__(self) -> None:
        self.asked: list[ForkRequest] = []

    @hookimpl
    def ctx_session_before_fork(self, session: Any, request: ForkRequest) -> SessionChangeDecision:
        self.asked.append(request)
        return SessionChangeDecision(cancel=True)
