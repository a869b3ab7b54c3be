"""Fixtures of the host tests (helpers live in ``support.host_rig``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from support.host_rig import BUILTIN_COMMANDS, RigFactory

from ctxmodes.host.options import HostOptions
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability
from ctxmodes.testing.clock import SimulatedClock
from ctxmodes.testing.harness import HostHarness


@pytest.fixture
def make_rig(tmp_path: Path) -> Iterator[RigFactory]:
    """``make_rig(responses, summaries=None, plugins=(), mode=None, ...)`` starts a host on a
    new session file in ``tmp_path`` and records every lifecycle record: a
    :class:`~ctxmodes.testing.harness.HostHarness` holding only the built-in commands, with
    the host's default options and durable writes.

    The host, the scripted model and the session store read one simulated clock, so that
    every timestamp is later than the one before however loaded the machine is (a test can
    pass its own ``clock``, or stamp the model's answers with ``answer_clock``)."""
    rigs: list[HostHarness] = []
    # One time line for every host of the test, so that their session ids differ too.
    shared_clock = SimulatedClock()

    def factory(
        responses: Sequence[dict[str, Any]] = (),
        *,
        summaries: Sequence[str] | None = None,
        plugins: Sequence[object] = (),
        default_plugins: Sequence[str] = (BUILTIN_COMMANDS,),
        mode: str | None = None,
        options: HostOptions | None = None,
        context_window: int = 128_000,
        max_tokens: int = 16_384,
        chunk_chars: int = 16,
        manager: SessionManager | None = None,
        clock: SimulatedClock | None = None,
        answer_clock: Callable[[], int] | None = None,
        reasoning: bool = False,
    ) -> HostHarness:
        script = Script.model_validate(
            {
                "responses": list(responses),
                **({"summaries": list(summaries)} if summaries is not None else {}),
                "context_window": context_window,
                "max_tokens": max_tokens,
                "reasoning": reasoning,
            }
        )
        clock = clock or shared_clock
        provider = ScriptedProvider(
            script, chunk_chars=chunk_chars, clock=answer_clock or clock.now_ms
        )
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        if manager is None:
            manager = SessionManager.create(
                project, tmp_path / "sessions", identity=clock.identity()
            )
        rig = HostHarness(
            project,
            [],
            plugins=plugins,
            mode=mode,
            provider=provider,
            clock=clock,
            options=options or HostOptions(),
            default_plugins=default_plugins,
            manager=manager,
            durability=Durability.FSYNC,
        )
        rigs.append(rig)
        return rig

    yield factory
    for rig in rigs:
        with contextlib.suppress(Exception):
            rig.close()
