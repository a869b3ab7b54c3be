"""Builders for Tree's unit tests: session entries held in a dict, so tests can also build
structures no well-behaved writer produces (cycles, missing parents, forged manifests)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from ctxmodes.session.branch_path import BranchPath
from ctxmodes.session.models import (
    AssistantMessage,
    BranchSummaryEntry,
    Cost,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionEntry,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE, window_marker
from ctxmodes.windows.stored import stored_form
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE, manifest_for_summary

_UNSET: Any = object()
ZERO_USAGE = Usage(
    input=0,
    output=0,
    cache_read=0,
    cache_write=0,
    total_tokens=0,
    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
)


class Tape:
    """An append-only set of entries with a movable leaf; ids are ``e1``, ``e2`` ..."""

    def __init__(self) -> None:
        self.entries: dict[str, SessionEntry] = {}
        self.leaf: str | None = None
        self.lookups = 0
        #: Called with every added entry, like a session manager's subscribers.
        self.listeners: list[Any] = []
        self._ids = (f"e{n}" for n in itertools.count(1))
        self._clock = itertools.count(1)

    # reading: the EntryGraph protocol
    def get_entry(self, entry_id: str) -> SessionEntry | None:
        self.lookups += 1
        return self.entries.get(entry_id)

    def get_branch_ids(self, from_id: str | None = None) -> list[str]:
        """Ids root first; a revisit ends the chain, as the store cuts parent cycles."""
        return [entry.id for entry in self.get_branch(from_id)]

    def get_branch_path(self, from_id: str) -> BranchPath:
        """The same chain as a branch path over the tape's insertion order."""
        ids = list(self.entries)
        positions = {entry_id: position for position, entry_id in enumerate(ids)}
        runs = [range(positions[i], positions[i] + 1) for i in self.get_branch_ids(from_id)]
        return BranchPath(ids, positions.get, runs)

    def get_parent_id(self, entry_id: str) -> str | None:
        entry = self.entries.get(entry_id)
        return entry.parent_id if entry is not None else None

    def get_branch_types(self, from_id: str | None = None) -> list[str]:
        return [entry.type for entry in self.get_branch(from_id)]

    def get_entry_json(self, entry_id: str) -> dict[str, Any] | None:
        """The stored form; not counted in ``lookups``, which counts decoded entries."""
        entry = self.entries.get(entry_id)
        return stored_form(entry) if entry is not None else None

    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        if from_id is not None and from_id not in self.entries:
            return []
        return self.branch(from_id if from_id is not None else _UNSET)

    def branch(self, leaf: str | None = _UNSET) -> list[SessionEntry]:
        current = self.leaf if leaf is _UNSET else leaf
        path: list[SessionEntry] = []
        seen: set[str] = set()
        while current is not None and current not in seen and current in self.entries:
            seen.add(current)
            entry = self.entries[current]
            path.append(entry)
            current = entry.parent_id
        path.reverse()
        return path

    def __iter__(self) -> Iterator[SessionEntry]:
        return iter(self.entries.values())

    # writing
    def _stamp(self) -> str:
        second = next(self._clock)
        return f"2025-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z"

    def _base(self, parent: str | None) -> dict[str, Any]:
        return {
            "id": next(self._ids),
            "parent_id": self.leaf if parent is _UNSET else parent,
            "timestamp": self._stamp(),
        }

    def add(self, entry: SessionEntry) -> SessionEntry:
        self.entries[entry.id] = entry
        self.leaf = entry.id
        for listener in self.listeners:
            listener(entry)
        return entry

    def user(self, text: str, *, parent: str | None = _UNSET) -> SessionEntry:
        message = UserMessage(content=[TextContent(text=text)], timestamp=1)
        return self.add(MessageEntry(message=message, **self._base(parent)))

    def assistant(
        self, text: str, *, tool: str | None = None, parent: str | None = _UNSET
    ) -> SessionEntry:
        content: list[Any] = [TextContent(text=text)]
        if tool is not None:
            content.append(ToolCall(id=f"call-{tool}", name=tool, arguments={}))
        message = AssistantMessage(
            content=content,
            api="scripted",
            provider="scripted",
            model="m",
            usage=ZERO_USAGE,
            stop_reason="toolUse" if tool else "stop",
            timestamp=1,
        )
        return self.add(MessageEntry(message=message, **self._base(parent)))

    def tool_result(self, tool: str, text: str, *, parent: str | None = _UNSET) -> SessionEntry:
        message = ToolResultMessage(
            tool_call_id=f"call-{tool}",
            tool_name=tool,
            content=[TextContent(text=text)],
            is_error=False,
            timestamp=1,
        )
        return self.add(MessageEntry(message=message, **self._base(parent)))

    def marker(
        self, identity: WindowIdentity, *, parent: str | None = _UNSET
    ) -> CustomMessageEntry:
        marker = window_marker(identity)
        entry = CustomMessageEntry(
            custom_type=CONTEXT_WINDOW_CUSTOM_TYPE,
            content=marker.content,
            display=True,
            details=marker.details.dump(),
            **self._base(parent),
        )
        self.add(entry)
        return entry

    def custom(self, custom_type: str, data: Any, *, parent: str | None = _UNSET) -> CustomEntry:
        entry = CustomEntry(custom_type=custom_type, data=data, **self._base(parent))
        self.add(entry)
        return entry

    def summary(
        self, text: str, *, parent: str | None, from_id: str | None = _UNSET
    ) -> BranchSummaryEntry:
        old_leaf = self.leaf if from_id is _UNSET else from_id
        entry = BranchSummaryEntry(from_id=old_leaf or "root", summary=text, **self._base(parent))
        self.add(entry)
        return entry

    def manifest(self, data: Any, *, parent: str | None = _UNSET) -> CustomEntry:
        return self.custom(TREE_ARCHIVE_CUSTOM_TYPE, data, parent=parent)

    def rollover(
        self, window_id: str, boundary_id: str, target_id: str, text: str = "summary"
    ) -> tuple[BranchSummaryEntry, CustomEntry]:
        """What a rollover appends: the summary at the target's parent, then its manifest."""
        target = self.entries[target_id]
        summary = self.summary(text, parent=target.parent_id)
        manifest = manifest_for_summary(window_id, boundary_id, summary)
        return summary, self.manifest(manifest.dump())


@pytest.fixture
def tape() -> Tape:
    return Tape()


# --------------------------------------------------------------------------- real sessions


class Script:
    """Drives a real :class:`SessionManager` through windows and rollovers, appending what
    Tree appends (without the agent host), for tests of the indexes built over real files."""

    def __init__(self, manager) -> None:
        self.manager = manager
        self.identity = WindowIdentity.first()
        self.boundary = self.marker(self.identity)
        self.archived = 0

    def marker(self, identity: WindowIdentity, hint: str | None = None) -> str:
        marker = window_marker(identity, hint)
        return self.manager.append_custom_message_entry(
            marker.custom_type, marker.content, True, marker.details.dump()
        )

    def user(self, text: str) -> str:
        return self.manager.append_message(
            UserMessage(content=[TextContent(text=text)], timestamp=1)
        )

    def assistant(self, text: str, tool: str | None = None, arguments: Any = None) -> str:
        content: list[Any] = [TextContent(text=text)]
        if tool is not None:
            content.append(ToolCall(id=f"call-{tool}", name=tool, arguments=arguments or {}))
        return self.manager.append_message(
            AssistantMessage(
                content=content,
                api="scripted",
                provider="scripted",
                model="m",
                usage=ZERO_USAGE,
                stop_reason="toolUse" if tool else "stop",
                timestamp=1,
            )
        )

    def tool_result(self, tool: str, text: str) -> str:
        return self.manager.append_message(
            ToolResultMessage(
                tool_call_id=f"call-{tool}",
                tool_name=tool,
                content=[TextContent(text=text)],
                is_error=False,
                timestamp=1,
            )
        )

    def note(self, path: str, text: str, action: str = "write") -> str:
        return self.manager.append_custom_entry(
            "codex-context-note",
            {"protocol": 1, "action": action, "path": path, "text": text, "timestamp": 1000},
        )

    def exchange(self, n: int, detail: str = "") -> None:
        self.user(f"request {n}")
        self.assistant(f"working on {n}", tool="bash", arguments={"command": f"echo {n}"})
        self.tool_result("bash", f"output {n} {detail}")
        self.assistant(f"answer {n}")

    def rollover(self, summary: str, snapshot: Any) -> str:
        """Archive the current window as Tree does; returns the summary entry id."""
        manager = self.manager
        if self.archived == 0:
            branch = list(manager.get_branch())
            target = next(e for e in branch if isinstance(e, MessageEntry | CustomMessageEntry))
        else:
            target = manager.get_entry(self.boundary)
        summary_id = manager.branch_with_summary(manager.get_parent_id(target.id), summary)
        summary_entry = manager.get_entry(summary_id)
        data = manifest_for_summary(self.identity.current_window_id, self.boundary, summary_entry)
        manager.append_custom_entry(TREE_ARCHIVE_CUSTOM_TYPE, data.dump())
        manager.append_custom_entry("codex-context-note-snapshot", snapshot)
        self.identity = self.identity.advance()
        self.boundary = self.marker(self.identity)
        self.archived += 1
        return summary_id


@pytest.fixture
def manager(tmp_path):
    from ctxmodes.session.manager import SessionManager

    manager = SessionManager.create(tmp_path, tmp_path / "sessions")
    yield manager
    manager.close()


@pytest.fixture
def script(manager) -> Script:
    return Script(manager)


# --------------------------------------------------------------------------- the agent host


class Harness:
    """A real agent host running Tree with the scripted model; records every host event."""

    def __init__(
        self,
        tmp_path,
        responses,
        *,
        summaries=None,
        plugins=(),
        mode="tree",
        keep_recent=None,
        session_file=None,
    ) -> None:
        import ctxmodes_tree
        from ctxmodes.compaction.settings import CompactionSettings
        from ctxmodes.host.options import HostOptions
        from ctxmodes.host.runtime import AgentHost
        from ctxmodes.plugins import make_configured_plugin_manager
        from ctxmodes.providers.script import Script
        from ctxmodes.providers.scripted import ScriptedProvider
        from ctxmodes.session.manager import SessionManager
        from ctxmodes.session.writer import Durability
        from ctxmodes.testing.clock import SimulatedClock
        from ctxmodes.ui import HeadlessUI

        script = {"responses": responses}
        if summaries is not None:
            script["summaries"] = summaries
        # One time line for the host, the model and the store: no outcome depends on timing.
        self.clock = SimulatedClock()
        self.provider = ScriptedProvider(Script.model_validate(script), clock=self.clock.now_ms)
        self.ui = HeadlessUI()
        self.records: list[Any] = []
        pm = make_configured_plugin_manager(
            load_entrypoints=False,
            plugins=[ctxmodes_tree, *plugins],
        )
        self.host = AgentHost(
            pm=pm,
            provider=self.provider,
            ui=self.ui,
            mode=mode,
            options=HostOptions(
                raise_hook_errors=True,
                clock=self.clock.now_ms,
                compaction=CompactionSettings(
                    keep_recent_tokens=keep_recent or CompactionSettings().keep_recent_tokens
                ),
            ),
            durability=Durability.NONE,
        )
        self.host.subscribe(self.records.append)
        if session_file is None:
            manager = SessionManager.create(
                tmp_path,
                tmp_path / "sessions",
                durability=Durability.NONE,
                identity=self.clock.identity(),
            )
        else:
            manager = SessionManager.open(
                session_file,
                cwd_override=tmp_path,
                durability=Durability.NONE,
                identity=self.clock.identity(),
            )
        self.host.start(manager)

    @property
    def session(self):
        return self.host.session

    @property
    def manager(self):
        return self.session.session_manager

    @property
    def mode(self):
        from ctxmodes.modes import mode_plugin_name

        return self.host.plugin_manager.get_plugin(mode_plugin_name(self.host.mode_name))

    def entries(self) -> list[SessionEntry]:
        return list(self.manager.get_entries())

    def of_type(self, custom_type: str) -> list[SessionEntry]:
        return [e for e in self.entries() if getattr(e, "custom_type", None) == custom_type]

    def kinds(self) -> list[str]:
        return [type(record).__name__ for record in self.records]

    def requests(self, purpose: str = "turn") -> list[Any]:
        return [
            r.request
            for r in self.records
            if type(r).__name__ == "ProviderRequested" and r.request.purpose == purpose
        ]

    def close(self) -> None:
        self.host.close()


@pytest.fixture
def harness(tmp_path):
    made: list[Harness] = []

    def make(responses, **options) -> Harness:
        instance = Harness(tmp_path / f"h{len(made)}", responses, **options)
        made.append(instance)
        return instance

    yield make
    for instance in made:
        instance.close()


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted response that calls one tool."""
    return {"text": f"calling {name}", "tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def respond():
    """Builders for scripted responses: ``respond.call(name, **args)``, ``respond.text(t)``."""

    class Respond:
        @staticmethod
        def call(name: str, **arguments: Any) -> dict[str, Any]:
            return call(name, **arguments)

        @staticmethod
        def text(text: str) -> dict[str, Any]:
            return {"text": text}

    return Respond


@pytest.fixture(scope="session")
def pi():
    """The real Pi 0.85 (skips with the reason when node or Pi is missing)."""
    from support.pi_oracle import require_pi

    return require_pi()
