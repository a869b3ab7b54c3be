"""A real agent host driven by the scripted model, for testing a mode end to end.

:class:`HostHarness` builds a fresh plugin manager holding only the given plugins (plus the
core's default plugins: the runtime tools and the built-in commands), starts a host with the
chosen mode on a new session file, and records every host event, so a test can assert what
was persisted, what the model was sent, and in which order things happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmodes.compaction.settings import CompactionSettings
    from ctxmodes.host.retry_settings import RetrySettings
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.host.session import AgentSession
    from ctxmodes.providers.base import ModelRequest, Provider
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.models import SessionEntry
    from ctxmodes.testing.clock import SimulatedClock
    from ctxmodes.ui import HeadlessUI


class HostHarness:
    """One host, one session file under ``directory``, one scripted model.

    Isolated: the host holds the core's default plugins and ``plugins``, whatever the
    environment says (``CTXMODES_LOAD_PLUGINS`` and ``CTXMODES_BLOCK_PLUGINS`` choose what a
    user's session loads, not what a test runs). ``CTXMODES_TRACE_PLUGINS`` still prints the
    hook calls: it changes no outcome, and it is how a failing test is read.

    :param responses: the scripted model's responses, in order (see
        :mod:`ctxmodes.providers.script`).
    :param summaries: scripted summaries for branch-summary and compaction calls.
    :param plugins: the plugins under test (a mode plugin module, probes).
    :param mode: the mode to activate; ``None`` runs with no mode at all.
    :param provider: a provider to use instead of the scripted model built from
        ``responses`` (e.g. one that reports another transport).
    :param mode_settings: the mode's ``[modes.<name>]`` table (keys and values as in the
        configuration file).
    :param compaction: compaction settings (e.g. ``keep_recent_tokens=1`` so that a short
        session has something to compact).
    :param clock: the time line of the host, the scripted model and the session store
        (a fresh :class:`~ctxmodes.testing.clock.SimulatedClock` when not given), so that
        no outcome depends on how fast the machine runs.
    :param retry: the retry of turns that failed on transient errors; off unless a test
        asks for it, since each retry consumes the next scripted response.
    """

    def __init__(
        self,
        directory: Path,
        responses: list[dict[str, Any]],
        *,
        summaries: list[str] | None = None,
        plugins: Sequence[object] = (),
        mode: str | None = None,
        context_window: int | None = None,
        provider: Provider | None = None,
        compaction: CompactionSettings | None = None,
        mode_settings: dict[str, Any] | None = None,
        clock: SimulatedClock | None = None,
        retry: RetrySettings | None = None,
    ) -> None:
        from ctxmodes.compaction.settings import CompactionSettings
        from ctxmodes.host.options import HostOptions
        from ctxmodes.host.retry_settings import RetrySettings
        from ctxmodes.host.runtime import AgentHost
        from ctxmodes.plugins import PluginSelection, make_plugin_manager
        from ctxmodes.providers.script import Script
        from ctxmodes.providers.scripted import ScriptedProvider
        from ctxmodes.session.manager import SessionManager
        from ctxmodes.session.writer import Durability
        from ctxmodes.testing.clock import SimulatedClock
        from ctxmodes.ui import HeadlessUI

        self.clock: SimulatedClock = clock or SimulatedClock()

        script: dict[str, Any] = {"responses": responses}
        if summaries is not None:
            script["summaries"] = summaries
        if context_window is not None:
            script["context_window"] = context_window
        self.provider: Provider = provider or ScriptedProvider(
            Script.model_validate(script), clock=self.clock.now_ms
        )
        self.ui: HeadlessUI = HeadlessUI()
        self.records: list[Any] = []
        pm = make_plugin_manager(
            load_entrypoints=False, selection=PluginSelection(), plugins=plugins
        )
        self.host: AgentHost = AgentHost(
            pm=pm,
            provider=self.provider,
            ui=self.ui,
            mode=mode,
            options=HostOptions(
                raise_hook_errors=True,
                clock=self.clock.now_ms,
                compaction=compaction or CompactionSettings(),
                retry=retry if retry is not None else RetrySettings(enabled=False),
            ),
            durability=Durability.NONE,
            mode_settings={mode: mode_settings} if mode and mode_settings else None,
        )
        self.host.subscribe(self.records.append)
        manager = SessionManager.create(
            directory,
            directory / "sessions",
            durability=Durability.NONE,
            identity=self.clock.identity(),
        )
        self.host.start(manager)

    @property
    def session(self) -> AgentSession:
        return self.host.session

    @property
    def manager(self) -> SessionManager:
        return self.session.session_manager

    def prompt(self, text: str) -> None:
        self.session.prompt(text)

    def entries(self) -> list[SessionEntry]:
        return list(self.manager.get_entries())

    def custom_entries(self, custom_type: str) -> list[SessionEntry]:
        """Entries (custom or custom-message) of ``custom_type``, in file order."""
        return [e for e in self.entries() if getattr(e, "custom_type", None) == custom_type]

    def requests(self, purpose: str = "turn") -> list[ModelRequest]:
        """Every request the model was sent for ``purpose``, in order, as sent."""
        return [
            record.request
            for record in self.records
            if type(record).__name__ == "ProviderRequested" and record.request.purpose == purpose
        ]

    def close(self) -> None:
        self.host.close()
