"""A Tree session written by ctxmodes, as the real Pi 0.85 reads it."""

from __future__ import annotations

import json

import pytest

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import BranchSummaryEntry
from ctxmodes.session.report import context_report
from ctxmodes.session.tree import flat_tree
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE

pytestmark = pytest.mark.pi


def test_pi_sees_the_tree_the_summaries_and_the_active_path(harness, respond, pi) -> None:
    h = harness(
        [
            respond.call("notes", action="write_file", path="plan.md", text="step one"),
            respond.call("bash", command="echo archived-work"),
            respond.call("new_context"),
            respond.call("history", action="search_contents", query="archived-work"),
            respond.call("new_context"),
            respond.text("window 2"),
        ],
        summaries=["Summary of window 0.", "Summary of window 1."],
    )
    h.session.prompt("start")
    path = h.manager.session_file
    summaries = [e.id for e in h.entries() if isinstance(e, BranchSummaryEntry)]
    manifests = h.of_type(TREE_ARCHIVE_CUSTOM_TYPE)
    assert len(summaries) == len(manifests) == 2
    h.close()

    with SessionManager.open(path, read_only=True) as manager:
        archived_leaves = [manager.get_entry(s).from_id for s in summaries]
        positions = [None, *archived_leaves]
        ours = {
            "tree": flat_tree(manager.get_tree()),
            **context_report(manager, llm=True),
            "positions": {
                ("__null__" if at is None else at): context_report(
                    manager, "null" if at is None else at, llm=True
                )
                for at in positions
            },
        }
    (answer,) = pi.open_many([{"file": str(path), "at": positions}])
    assert "openError" not in answer
    for key in ("tree", "leafId", "branchIds", "contextEntryIds", "context", "llm", "positions"):
        assert json.dumps(answer[key], sort_keys=True) == json.dumps(ours[key], sort_keys=True), key
    # Pi keeps both summaries on the active path and in its context (only Tree hides them),
    # and each archived window is a side branch that is not on that path.
    assert set(summaries) <= set(answer["branchIds"])
    pi_summaries = [m for m in answer["context"]["messages"] if m["role"] == "branchSummary"]
    assert len(pi_summaries) == 2
    assert pi_summaries[0]["summary"].endswith("Summary of window 0.")
    assert pi_summaries[1]["summary"].endswith("Summary of window 1.")
    for leaf in archived_leaves:
        assert leaf not in answer["branchIds"]
        assert leaf in answer["positions"][leaf]["branchIds"]
