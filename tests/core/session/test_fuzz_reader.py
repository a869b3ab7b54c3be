"""Fuzzing the store with mutated real session files: it never crashes, never hangs, and
every line is accounted for."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzzing import SeedSessions, bounded, fuzz_settings, mutated_session, seed_sessions

from ctxmodes.session import codec
from ctxmodes.session.errors import SessionError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report, write_context_report
from ctxmodes.session.tree import flat_tree

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory, oracle_cases: Path) -> SeedSessions:
    return SeedSessions(seed_sessions(tmp_path_factory.mktemp("seeds"), oracle_cases))


def _open_everything(path: Path) -> None:
    try:
        manager = SessionManager.open(path, read_only=True)
    except SessionError:
        return  # not a session at all (a damaged header): a clear error is the answer
    with manager:
        lines = path.read_bytes().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        # Header, entries and skipped lines add up to the lines of the file.
        assert manager.entry_count() + len(manager.skipped_lines) + 1 == len(lines)
        roots = manager.get_tree()
        tree = flat_tree(roots)
        ids = [entry.id for entry in manager.get_entries()]
        assert len(tree["children"]) == len(set(ids)), "each node once"
        # Every report encodes, and the streamed report is the same bytes.
        _assert_report_streams(manager, None, llm=True)
        for entry_id in ids[:20]:
            _assert_report_streams(manager, entry_id, llm=False)


def _assert_report_streams(manager: SessionManager, at: str | None, *, llm: bool) -> None:
    pieces: list[bytes] = []
    write_context_report(manager, pieces.append, at, llm=llm)
    assert b"".join(pieces) == codec.dumps(context_report(manager, at, llm=llm)) + b"\n"


@fuzz_settings(max_examples=300)
@given(data=st.data())
def test_mutated_sessions_open_with_every_line_accounted_for(seeds, data) -> None:
    content = data.draw(mutated_session(seeds.lines))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "fuzzed.jsonl"
        path.write_bytes(content)
        bounded(lambda: _open_everything(path))
