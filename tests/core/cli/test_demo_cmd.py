"""``ctxmodes demo``: the offline Tree-mode walkthrough."""

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


def test_demo_without_the_tree_mode_says_so(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("CTXMODES_BLOCK_PLUGINS", "tree")
    assert main(["demo"]) == 1
    err = capsys.readouterr().err
    assert "needs the 'tree' mode, which is not installed" in err
    assert len(err.strip().splitlines()) == 1
