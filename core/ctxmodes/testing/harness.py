"""A real agent host driven by the scripted model, for testing a mode — or the host — end to
end.

:class:`HostHarness` builds a fresh plugin manager holding only the given plugins (plus the
core's default plugins: the runtime tools and the built-in commands), starts a host with the
chosen mode on a new session file, and records every host event, so a test can assert what
was persisted, what the model was sent, and in which order things happened. It is the one
host builder of ctxmodes' own tests too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ctxmodes.compaction.settings import CompactionSettings
    from ctxmodes.host.options import HostOptions
    from ctxmodes.host.records import HostRecord
    from ctxmodes.host.retry_settings import RetrySettings
    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.host.session import AgentSession
    from ctxmodes.providers.base import ModelRequest, Provider
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.session.models import SessionEntry
    from ctxmodes.session.writer import Durability
    from ctxmodes.testing.clock import SimulatedClock
    from ctxmodes.ui import HeadlessUI


RecordT = TypeVar("RecordT")


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
    :param options: the host's options, whole, instead of the harness's (hook errors
        raised, ``compaction``, ``retry``); the harness's clock is set in them.
    :param default_plugins: the core's plugins to hold (by module name), instead of all of
        them (the runtime tools and the built-in commands).
    :param manager: a session to start on, instead of a new one in ``directory``.
    :param durability: how the host and the new session write (default: buffered, flushed
        when the test reads the file).
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
        options: HostOptions | None = None,
        default_plugins: Sequence[str] | None = None,
        manager: SessionManager | None = None,
        durability: Durability | None = None,
    ) -> None:
        import dataclasses

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
        self.records: list[HostRecord] = []
        if options is None:
            options = HostOptions(
                raise_hook_errors=True,
                compaction=compaction or CompactionSettings(),
                retry=retry if retry is not None else RetrySettings(enabled=False),
            )
        elif compaction is not None or retry is not None:
            raise ValueError("give compaction and retry in options, or options not at all")
        writes = durability if durability is not None else Durability.NONE
        pm = make_plugin_manager(
            load_entrypoints=False,
            selection=PluginSelection(),
            plugins=plugins,
            **({"default_plugins": default_plugins} if default_plugins is not None else {}),
        )
        self.host: AgentHost = AgentHost(
            pm=pm,
            provider=self.provider,
            ui=self.ui,
            mode=mode,
            options=dataclasses.replace(options, clock=self.clock.now_ms),
            durability=writes,
            mode_settings={mode: mode_settings} if mode and mode_settings else None,
        )
        self.host.subscribe(self.records.append)
        if manager is None:
            manager = SessionManager.create(
                directory, directory / "sessions", durability=writes, identity=self.clock.identity()
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
        from ctxmodes.host.records import ProviderRequested

        return [
            record.request
            for record in self.of(ProviderRequested)
            if record.request.purpose == purpose
        ]

    def types(self, *, updates: bool = False) -> list[str]:
        """The types of the records so far, in order; streaming updates only with
        ``updates``."""
        streaming = ("message_update", "tool_execution_update")
        return [record.type for record in self.records if updates or record.type not in streaming]

    def of(self, kind: type[RecordT]) -> list[RecordT]:
        """The records of type ``kind`` so far, in order."""
        return [record for record in self.records if isinstance(record, kind)]

    def clear(self) -> None:
        """Forget the records so far."""
        self.records.clear()

    def file_entries(self) -> list[dict[str, Any]]:
        """The session file's entries (header excluded), as stored on disk; none before the
        file is written (at the session's first message)."""
        import orjson

        self.manager.flush()
        path = self.manager.session_file
        assert path is not None, "the session is not stored in a file"
        if not path.exists():
            return []
        lines = path.read_bytes().splitlines()
        return [orjson.loads(line) for line in lines[1:] if line]

    def messages_in_file(self) -> list[dict[str, Any]]:
        """The messages of the session file's entries, as stored."""
        return [entry["message"] for entry in self.file_entries() if entry["type"] == "message"]

    def close(self) -> None:
        self.host.close()
