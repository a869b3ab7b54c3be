from __future__ import annotations

from pathlib import Path

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report


def test_context_report_positions(oracle_cases: Path) -> None:
    with SessionManager.open(oracle_cases / "branch_simple.jsonl", read_only=True) as manager:
        leaf = context_report(manager)
        first = manager.get_branch_ids()[0]
        at_first = context_report(manager, first)
        empty = context_report(manager, "null")
        assert leaf["leafId"] == manager.get_leaf_id()
        assert at_first["branchIds"] == [first]
        assert empty == {
            "leafId": None,
            "branchIds": [],
            "contextEntryIds": [],
            "context": {"messages": [], "thinkingLevel": "off", "model": None},
        }
        assert context_report(manager) == leaf  # positions do not move the leaf
