"""Every case of the Pi oracle corpus opened by ctxmodes gives Pi's answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import tree_without_repeats

from ctxmodes.session.convert import convert_to_llm, convert_to_llm_json
from ctxmodes.session.errors import NotASessionError
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import to_json
from ctxmodes.session.report import context_report
from ctxmodes.session.tree import flat_tree


def _llm(report: dict[str, Any]) -> list[dict[str, Any]]:
    return convert_to_llm_json(report["context"]["messages"])


def test_case_matches_pi(
    oracle_cases: Path, expected: Callable[[str, str], Any], case_name: str
) -> None:
    want = expected(case_name, "expected")
    path = oracle_cases / f"{case_name}.jsonl"
    before = path.read_bytes()
    if "openError" in want:
        with pytest.raises(NotASessionError, match="not a valid pi session"):
            SessionManager.open(path, read_only=True)
        return
    llm = expected(case_name, "llm")
    with SessionManager.open(path, read_only=True) as manager:
        report = context_report(manager)
        assert report["context"] == want["context"]
        assert manager.entry_count() == want["entryCount"]
        assert manager.get_session_name() == want["sessionName"]
        assert _llm(report) == llm["leaf"]
        models = convert_to_llm(manager.build_session_context().messages)
        assert [to_json(message) for message in models] == llm["leaf"]
        if "nondeterministicOnOpen" in want:
            # Pi invents ids or a header while opening these; only the shape can match.
            assert len(report["branchIds"]) == len(want["branchIds"])
            return
        assert manager.get_header_json() == want["header"]
        assert report["leafId"] == want["leafId"]
        assert report["branchIds"] == want["branchIds"]
        assert report["contextEntryIds"] == want["contextEntryIds"]
        assert flat_tree(manager.get_tree()) == tree_without_repeats(want["tree"])
        for key, position in want.get("positions", {}).items():
            at = context_report(manager, "null" if key == "__null__" else key)
            assert at == {field: position[field] for field in at}, key
            assert _llm(at) == llm["positions"][key], key
        for entry_id, light in want.get("allPositions", {}).items():
            at = context_report(manager, entry_id)
            assert {
                "branchIds": at["branchIds"],
                "contextEntryIds": at["contextEntryIds"],
                "thinkingLevel": at["context"]["thinkingLevel"],
                "model": at["context"]["model"],
                "messageCount": len(at["context"]["messages"]),
            } == light, entry_id
    # Opening never rewrites the file, even where Pi would (migration, missing newline).
    assert path.read_bytes() == before
