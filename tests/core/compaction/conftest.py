"""The Pi oracle corpus for the compaction tests.

The corpus (session files and the answers Pi 0.85.0 computed for them) is located by
:mod:`support.pi_oracle`; tests that need it are skipped, with that reason, when it is
absent. A test taking a ``compaction_case`` argument runs once per case that has a
``.compaction.json``; one taking ``trace_case`` once per agent trace.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import oracle_dir
from support.pi_oracle import pi_node_modules as find_pi_node_modules

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import entry_from_json

NO_CORPUS = "needs the Pi oracle corpus (set PI_ORACLE_DIR)"


def _cases_dir() -> Path | None:
    root = oracle_dir()
    return None if root is None else root / "cases"


def _case_names(suffix: str) -> list[Any]:
    root = _cases_dir()
    names = [] if root is None else [p.name.removesuffix(suffix) for p in root.glob(f"*{suffix}")]
    names = sorted(name for name in names if root and (root / f"{name}.jsonl").exists())
    if names:
        return names
    return [pytest.param("no-corpus", marks=pytest.mark.skip(reason=NO_CORPUS))]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "compaction_case" in metafunc.fixturenames:
        metafunc.parametrize("compaction_case", _case_names(".compaction.json"))
    if "trace_case" in metafunc.fixturenames:
        metafunc.parametrize("trace_case", _case_names(".trace.json"))


class Corpus:
    """Reads cases of the oracle corpus."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @cache  # noqa: B019 - one corpus per session; the cache lives as long as it does
    def load(self, name: str, suffix: str) -> Any:
        return json.loads((self.root / f"{name}{suffix}").read_text(encoding="utf-8"))

    def path(self, name: str) -> Path:
        return self.root / f"{name}.jsonl"

    def ids_are_random(self, name: str) -> bool:
        """Pi makes up random entry ids while opening these files (v1 migration)."""
        return "nondeterministicOnOpen" in self.load(name, ".expected.json")

    @contextmanager
    def open(self, name: str) -> Iterator[SessionManager]:
        manager = SessionManager.open(self.path(name), read_only=True)
        try:
            yield manager
        finally:
            manager.close()


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    root = _cases_dir()
    if root is None:
        pytest.skip(NO_CORPUS)
    return Corpus(root)


@pytest.fixture(scope="session")
def pi_node_modules() -> Path:
    """The real Pi's node_modules directory; skips the test when node or Pi is missing."""
    if shutil.which("node") is None:
        pytest.skip("needs node to run the real Pi")
    found = find_pi_node_modules()
    if found is None:
        pytest.skip("needs the real Pi 0.85.0 (set PI_NODE_MODULES, or npm ci into .pi/)")
    return found


class BranchBuilder:
    """Appends entries (typed models) to one branch, each the child of the previous one."""

    def __init__(self) -> None:
        self.entries: list[Any] = []
        self._clock = 1_700_000_000_000

    def _add(self, body: dict[str, Any]) -> Any:
        index = len(self.entries)
        parent = self.entries[-1].id if self.entries else None
        timestamp = f"2025-01-01T00:00:{index % 60:02d}.000Z"
        entry = entry_from_json(
            {**body, "id": f"e{index}", "parentId": parent, "timestamp": timestamp}
        )
        self.entries.append(entry)
        return entry

    def message(self, message: dict[str, Any]) -> Any:
        self._clock += 1000
        return self._add({"type": "message", "message": {**message, "timestamp": self._clock}})

    def user(self, text: str) -> Any:
        return self.message({"role": "user", "content": [{"type": "text", "text": text}]})

    def assistant(self, *blocks: dict[str, Any], usage: int = 0, stop: str = "stop") -> Any:
        cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        return self.message(
            {
                "role": "assistant",
                "content": list(blocks) or [{"type": "text", "text": "ok"}],
                "api": "faux",
                "provider": "faux",
                "model": "m",
                "usage": {
                    "input": usage,
                    "output": 0,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "totalTokens": usage,
                    "cost": cost,
                },
                "stopReason": stop,
            }
        )

    def tool_result(self, text: str) -> Any:
        return self.message(
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": [{"type": "text", "text": text}],
                "isError": False,
            }
        )

    def label(self) -> Any:
        return self._add({"type": "label", "targetId": "e0", "label": "x"})

    def compaction(self, first_kept_id: str, summary: str = "S", **extra: Any) -> Any:
        body = {"type": "compaction", "summary": summary, "firstKeptEntryId": first_kept_id}
        return self._add({**body, "tokensBefore": 1, **extra})

    def branch_summary(self, summary: str, **extra: Any) -> Any:
        return self._add({"type": "branch_summary", "fromId": "e0", "summary": summary, **extra})

    @staticmethod
    def text(value: str) -> dict[str, Any]:
        return {"type": "text", "text": value}

    @staticmethod
    def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
        return {"type": "toolCall", "id": "c", "name": name, "arguments": arguments}


@pytest.fixture
def branch() -> BranchBuilder:
    return BranchBuilder()
