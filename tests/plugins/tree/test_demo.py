"""``ctxmodes demo``: the offline Tree-mode walkthrough, a command of the Tree plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxmodes.cli import main
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import BranchSummaryEntry


def test_demo_shows_windows_tree_and_recovery(tmp_path: Path, capsys) -> None:
    session = tmp_path / "out" / "demo.jsonl"
    assert main(["demo", "--session", str(session)]) == 0
    out = capsys.readouterr().out
    for window in ("window 0", "window 1", "window 2"):
        assert window in out
    assert "archive summary: kept in the file, hidden from the model" in out
    # The search recovers the code name from the archived window 0.
    recovered = [line for line in out.splitlines() if "archived window" in line]
    assert recovered
    assert "AMBER-FALCON-7" in out.split("history search_contents")[-1]
    with SessionManager.open(session, read_only=True) as manager:
        summaries = [e for e in manager.get_entries() if isinstance(e, BranchSummaryEntry)]
        assert len(summaries) == 2
        assert all(s.id in manager.get_branch_ids() for s in summaries)


def test_demo_refuses_to_overwrite(tmp_path: Path, capsys) -> None:
    existing = tmp_path / "demo.jsonl"
    existing.write_text("keep me\n")
    assert main(["demo", "--session", str(existing)]) == 1
    assert "exists" in capsys.readouterr().err
    assert existing.read_text() == "keep me\n"


def test_the_demo_is_trees_command(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    # With Tree not loaded there is no demo: the command comes from the plugin.
    monkeypatch.setenv("CTXMODES_BLOCK_PLUGINS", "tree")
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--help"])
    assert exited.value.code == 2
    assert "invalid choice: 'demo'" in capsys.readouterr().err
