"""Branch-summary collection, budgeting and serialization against Pi's recorded answers.

``branchSummaryCollect[target]`` in ``<case>.compaction.json`` records a navigation from the
file's last entry to ``target``: the entries Pi collected, the common ancestor, what
``prepareBranchEntries`` kept with budgets 0 and 60, and the serialized conversation.
"""

from __future__ import annotations

import pytest

from ctxmodes.compaction import (
    collect_entries_for_branch_summary,
    prepare_branch_entries,
    serialize_conversation,
)
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.models import to_json

BUDGETS = {"budget0": 0, "budget60": 60}


@pytest.mark.slow  # thousands of entries a case
def test_collect_and_prepare(corpus, compaction_case):
    recorded = corpus.load(compaction_case, ".compaction.json")["branchSummaryCollect"]
    with corpus.open(compaction_case) as manager:
        all_entries = list(manager.get_entries())
        for target, expected in recorded.items():
            collected = collect_entries_for_branch_summary(manager, expected["fromLeafId"], target)
            assert [entry.id for entry in collected.entries] == expected["entryIds"], target
            assert collected.common_ancestor_id == expected["commonAncestorId"], target
            # A plain list of the session's entries is an equivalent source.
            from_list = collect_entries_for_branch_summary(
                all_entries, expected["fromLeafId"], target
            )
            assert from_list == collected
            for key, budget in BUDGETS.items():
                pi = expected["prepareBranchEntries"][key]
                ours = prepare_branch_entries(collected.entries, budget)
                assert ours.total_tokens == pi["totalTokens"], (target, key)
                assert len(ours.messages) == pi["messageCount"], (target, key)
                if "messages" in pi:
                    assert [to_json(m) for m in ours.messages] == pi["messages"], (target, key)
                if "fileOps" in pi:
                    file_ops = {k: list(v) for k, v in ours.file_ops.model_dump().items()}
                    assert file_ops == pi["fileOps"], (target, key)
            if "serializedConversation" in expected:
                unlimited = prepare_branch_entries(collected.entries)
                text = serialize_conversation(convert_to_llm(unlimited.messages))
                assert text == expected["serializedConversation"], target


def test_collect_without_old_leaf_is_empty(corpus, compaction_case):
    with corpus.open(compaction_case) as manager:
        leaf = manager.get_leaf_id()
        assert leaf is not None
        collected = collect_entries_for_branch_summary(manager, None, leaf)
        assert collected.entries == []
        assert collected.common_ancestor_id is None
