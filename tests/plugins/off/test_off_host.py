"""Off through the real host: a session run with Off active is byte for byte the session the
host writes with no mode plugin at all."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import ctxmodes_off
from ctxmodes.compaction import CompactionSettings
from ctxmodes.host.options import HostOptions
from ctxmodes.host.runtime import AgentHost
from ctxmodes.plugins import make_plugin_manager
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session import manager as manager_module
from ctxmodes.session.manager import SessionManager

SCRIPT = {
    "responses": [
        {"text": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "It printed hi. " * 10},
        {"text": "Second answer. " * 10},
        {"text": "After the tree move. " * 10},
    ],
    "summaries": ["branch summary", "compaction summary", "turn prefix"],
}
DEFAULTS = ("ctxmodes.tools.builtin:BuiltinToolsPlugin", "ctxmodes.host.builtin_commands")


class _Clock:
    """Deterministic stand-ins for everything random or time-dependent in a session file."""

    def __init__(self) -> None:
        self._ms = itertools.count(1_767_225_600_000, 7)
        self._ids = itertools.count(1)

    def now_ms(self) -> int:
        return next(self._ms)

    def time(self) -> float:
        return self.now_ms() / 1000

    def timestamp(self) -> str:
        ms = self.now_ms()
        return f"2026-01-01T00:{(ms // 60_000) % 60:02d}:{(ms // 1000) % 60:02d}.{ms % 1000:03d}Z"

    def entry_id(self, existing: object) -> str:
        return f"{next(self._ids):08x}"


def run_session(
    project: Path, directory: Path, monkeypatch: pytest.MonkeyPatch, *, with_off: bool
) -> bytes:
    clock = _Clock()
    monkeypatch.setattr(manager_module, "new_entry_id", clock.entry_id)
    monkeypatch.setattr(manager_module, "now_timestamp", clock.timestamp)
    monkeypatch.setattr(manager_module, "new_session_id", lambda: "off-host-session")
    monkeypatch.setattr("ctxmodes.providers.scripted.time", clock)
    plugins = [ctxmodes_off] if with_off else []
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=DEFAULTS, plugins=plugins)
    provider = ScriptedProvider(Script.model_validate(SCRIPT))
    options = HostOptions(clock=clock.now_ms, compaction=CompactionSettings(keep_recent_tokens=30))
    host = AgentHost(pm=pm, provider=provider, mode="off" if with_off else None, options=options)
    manager = SessionManager.create(project, directory)
    session = host.start(manager)
    assert session.mode_name == "off"
    try:
        session.prompt("Run echo")
        session.prompt("Again")
        first_user = next(e for e in manager.get_entries() if e.type == "message")
        session.submit(f"/tree {first_user.id} --summarize --label retry")
        session.prompt("Rephrased")
        session.submit("/compact")
        path = manager.session_file
        assert path is not None
        return path.read_bytes()
    finally:
        host.close()


def test_off_writes_what_the_host_writes_without_a_mode(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    with_off = run_session(project, tmp_path / "with-off", monkeypatch, with_off=True)
    without = run_session(project, tmp_path / "no-mode", monkeypatch, with_off=False)
    assert with_off == without
    # The run exercised what Off must leave alone.
    for kind in (b'"type":"branch_summary"', b'"type":"compaction"', b'"role":"toolResult"'):
        assert kind in with_off
