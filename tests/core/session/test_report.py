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


def test_a_session_opened_without_preloading_reports_the_same(oracle_cases: Path) -> None:
    # Nothing decoded ahead, nothing kept once read: the same answers, from the index alone.
    for case in ("compaction_with_labels_and_meta", "branch_simple", "linear_thinking_tools"):
        path = oracle_cases / f"{case}.jsonl"
        with SessionManager.open(path, read_only=True) as kept:
            want = [context_report(kept, entry_id) for entry_id in kept.get_branch_ids()]
            want.append(context_report(kept, llm=True))
        with SessionManager.open(path, read_only=True, preload=False) as bare:
            got = [context_report(bare, entry_id) for entry_id in bare.get_branch_ids()]
            got.append(context_report(bare, llm=True))
            assert bare.get_entry_json(bare.get_branch_ids()[-1]) is not bare.get_entry_json(
                bare.get_branch_ids()[-1]
            ), "an entry read again is decoded again, not kept"
        assert got == want
