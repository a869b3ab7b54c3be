from __future__ import annotations

import pytest

from ctxmodes.compaction import (
    MalformedMessageError,
    collect_entries_for_branch_summary,
    estimate_tokens,
    prepare_branch_entries,
)
from ctxmodes.session.models import entry_from_json, to_json


def _roles(prepared) -> list[str]:
    return [to_json(m)["role"] for m in prepared.messages]


def test_tool_results_and_metadata_are_left_out(branch):
    branch.user("q")
    branch.assistant(branch.tool_call("read", path="a.py"))
    branch.tool_result("contents")
    branch.label()
    branch.assistant(branch.text("done"))
    prepared = prepare_branch_entries(branch.entries)
    assert _roles(prepared) == ["user", "assistant", "assistant"]
    assert prepared.total_tokens == sum(estimate_tokens(m) for m in prepared.messages)
    assert prepared.file_ops.read == ("a.py",)


def test_the_newest_messages_fill_the_budget(branch):
    branch.user("a" * 400)  # 100 tokens
    branch.user("b" * 40)  # 10 tokens
    branch.user("c" * 40)
    prepared = prepare_branch_entries(branch.entries, 25)
    assert prepared.total_tokens == 20
    assert len(prepared.messages) == 2


def test_an_older_summary_may_overrun_the_budget_below_90_percent(branch):
    branch.branch_summary("s" * 400)  # 100 tokens
    branch.user("u" * 40)  # 10 tokens
    prepared = prepare_branch_entries(branch.entries, 50)
    assert _roles(prepared) == ["branchSummary", "user"]
    assert prepared.total_tokens == 110
    # Past 90 % of the budget not even a summary gets in.
    assert _roles(prepare_branch_entries(branch.entries, 11)) == ["user"]


def test_file_lists_of_earlier_summaries_count_unless_a_plugin_wrote_them(branch):
    details = {"readFiles": ["r"], "modifiedFiles": ["m"]}
    branch.branch_summary("ours", details=details)
    branch.branch_summary("theirs", details={"readFiles": ["x"]}, fromHook=True)
    branch.compaction("e0", details={"readFiles": ["c"]})  # compaction lists are not folded
    prepared = prepare_branch_entries(branch.entries)
    assert prepared.file_ops.read == ("r",)
    assert prepared.file_ops.edited == ("m",)


def test_messages_without_content_raise_where_pi_throws(branch):
    branch.message({"role": "user", "content": None})
    with pytest.raises(MalformedMessageError):
        prepare_branch_entries(branch.entries)


def test_a_branch_summary_entry_without_summary_raises(branch):
    branch.user("q")
    entry = to_json(branch.branch_summary("x"))
    del entry["summary"]
    with pytest.raises(MalformedMessageError):
        prepare_branch_entries([branch.entries[0], entry_from_json(entry)])


def test_collection_stops_at_the_common_ancestor(branch):
    branch.user("root")
    branch.assistant()
    fork = branch.entries[-1]
    branch.user("left")
    branch.assistant()
    left_leaf = branch.entries[-1].id
    right = entry_from_json(
        {
            "type": "message",
            "id": "r1",
            "parentId": fork.id,
            "timestamp": "2025-01-01T00:01:00.000Z",
            "message": {"role": "user", "content": "right", "timestamp": 5},
        }
    )
    entries = [*branch.entries, right]
    collected = collect_entries_for_branch_summary(entries, left_leaf, "r1")
    assert collected.common_ancestor_id == fork.id
    assert [e.id for e in collected.entries] == ["e2", "e3"]
    # Unknown target: nothing is shared, the whole old branch is collected.
    unknown = collect_entries_for_branch_summary(entries, left_leaf, "nope")
    assert unknown.common_ancestor_id is None
    assert [e.id for e in unknown.entries] == ["e0", "e1", "e2", "e3"]


def test_collection_from_a_list_survives_parent_cycles():
    def entry(entry_id: str, parent: str) -> dict[str, object]:
        return {
            "type": "label",
            "id": entry_id,
            "parentId": parent,
            "targetId": "a",
            "timestamp": "2025-01-01T00:00:00.000Z",
        }

    entries = [entry_from_json(entry("a", "b")), entry_from_json(entry("b", "a"))]
    collected = collect_entries_for_branch_summary(entries, "a", "zzz")
    assert [e.id for e in collected.entries] == ["b", "a"]
