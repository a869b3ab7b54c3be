"""Off through the real host: a session run with Off active is the session the host writes with
no mode plugin at all, plus the entry recording that Off manages it."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import ctxmodes_off
from ctxmodes.compaction import CompactionSettings
from ctxmodes.host.options import HostOptions
from ctxmodes.host.runtime import AgentHost
from ctxmodes.plugins import make_plugin_manager
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.ids import IdentitySource
from ctxmodes.session.manager import SessionManager

SCRIPT = {
    "responses": [
        {"text": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "It printed hi. " * 10},
        {"text": "Second answer. " * 10},
        {"text": "After the tree move. " * 10},
        {"text": "In the fork. " * 10},
        {"text": "In a fresh session. " * 10},
    ],
    "summaries": ["branch summary", "compaction summary", "turn prefix"],
}
DEFAULTS = ("ctxmodes.tools.builtin:BuiltinToolsPlugin", "ctxmodes.host.builtin_commands")


class _Clock:
    """Deterministic stand-ins for everything random or time-dependent in a session file."""

    def __init__(self) -> None:
        self._ms = itertools.count(1_767_225_600_000, 7)
        self._ids = itertools.count(1)
        self._sessions = itertools.count(1)

    def now_ms(self) -> int:
        return next(self._ms)

    def timestamp(self) -> str:
        ms = self.now_ms()
        return f"2026-01-01T00:{(ms // 60_000) % 60:02d}:{(ms // 1000) % 60:02d}.{ms % 1000:03d}Z"

    def entry_id(self, existing: object) -> str:
        return f"{next(self._ids):08x}"

    def session_id(self) -> str:
        return f"off-host-session-{next(self._sessions)}"

    def identity(self) -> IdentitySource:
        return IdentitySource(
            entry_id=self.entry_id, session_id=self.session_id, timestamp=self.timestamp
        )


def run_sessions(project: Path, directory: Path, *, with_off: bool) -> dict[str, bytes]:
    """Run a session through compaction, a fork and /new; return every file written."""
    clock = _Clock()
    plugins = [ctxmodes_off] if with_off else []
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=DEFAULTS, plugins=plugins)
    provider = ScriptedProvider(Script.model_validate(SCRIPT), clock=clock.now_ms)
    options = HostOptions(clock=clock.now_ms, compaction=CompactionSettings(keep_recent_tokens=30))
    host = AgentHost(pm=pm, provider=provider, mode="off" if with_off else None, options=options)
    manager = SessionManager.create(project, directory, identity=clock.identity())
    session = host.start(manager)
    assert session.mode_name == "off"
    try:
        session.prompt("Run echo")
        session.prompt("Again")
        first_user = next(e for e in manager.get_entries() if e.type == "message")
        session.submit(f"/tree {first_user.id} --summarize --label retry")
        session.prompt("Rephrased")
        session.submit("/compact")
        session.submit("/fork")
        host.session.prompt("Forked")
        host.session.submit("/new")
        host.session.prompt("Fresh")
    finally:
        host.close()
    # A fork names its parent's file; the two runs write to different directories.
    where = str(directory).encode()
    return {
        path.name: path.read_bytes().replace(where, b"<sessions>")
        for path in sorted(directory.iterdir())
    }


def _without_mode_records(files: dict[str, bytes]) -> list[bytes]:
    """Each file without its mode entries, its entry ids numbered in order of appearance and
    its times left out: the record takes an id and a time from the deterministic clock,
    which shifts every later one."""
    normalized = []
    ids: dict[str, str] = {}  # across files: a fork keeps its parent's ids
    for data in files.values():
        records = [line for line in data.splitlines() if b'"customType":"ctxmodes-mode"' in line]
        lines = [line for line in data.splitlines() if line not in records]
        text = b"\n".join(lines).decode()
        for record in records:  # each is the first entry: what followed it is a root
            text = text.replace(f'"parentId":"{json.loads(record)["id"]}"', '"parentId":null')
        for line in lines[1:]:
            ids.setdefault(json.loads(line)["id"], f"<id{len(ids)}>")
        text = re.sub(r'"timestamp":("[^"]*"|\d+)', '"timestamp":0', text)
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z", "<time>", text)
        text = re.sub(r"\b[0-9a-f]{8}\b", lambda m: ids.get(m.group(0), m.group(0)), text)
        normalized.append(text.encode())
    return normalized


def test_off_writes_what_the_host_writes_without_a_mode(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with_off = run_sessions(project, tmp_path / "with-off", with_off=True)
    without = run_sessions(project, tmp_path / "no-mode", with_off=False)
    assert _without_mode_records(with_off) == _without_mode_records(without)
    assert len(with_off) == 3  # the first session, its fork and the fresh one
    first, forked, fresh = with_off.values()
    for data in (first, fresh):
        second_line = json.loads(data.splitlines()[1])
        assert second_line["customType"] == "ctxmodes-mode"
        assert second_line["data"] == {"protocol": 1, "mode": "off", "settings": {}}
    # The run exercised what Off must leave alone.
    for kind in (b'"type":"branch_summary"', b'"type":"compaction"', b'"role":"toolResult"'):
        assert kind in first
    assert b'"parentSession":"<sessions>/' in forked
    assert b"Forked" in forked
    assert b"Fresh" in fresh
