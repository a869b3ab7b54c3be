from __future__ import annotations

import pytest

from ctxmodes.compaction import FileOperations, compute_file_lists, format_file_operations
from ctxmodes.compaction.prompts import (
    BRANCH_SUMMARY_PROMPT,
    COMPACTION_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
    compaction_prompt,
)

CHECKPOINT_SECTIONS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
]


@pytest.mark.parametrize("prompt", [COMPACTION_PROMPT, UPDATE_PROMPT, BRANCH_SUMMARY_PROMPT])
def test_checkpoint_prompts_ask_for_the_sections_in_order(prompt):
    positions = [prompt.index(f"\n{section}\n") for section in CHECKPOINT_SECTIONS]
    assert positions == sorted(positions)


def test_only_history_summaries_keep_critical_context():
    assert "\n## Critical Context\n" in COMPACTION_PROMPT
    assert "\n## Critical Context\n" in UPDATE_PROMPT
    assert "## Critical Context" not in BRANCH_SUMMARY_PROMPT


def test_the_turn_prefix_prompt_has_its_own_sections():
    for section in ("## Original Request", "## Early Progress", "## Context for Suffix"):
        assert f"\n{section}\n" in TURN_PREFIX_PROMPT


def test_the_update_prompt_points_at_the_previous_summary_tags():
    assert "<previous-summary>" in UPDATE_PROMPT


def test_an_empty_previous_summary_counts_as_none():
    assert (
        compaction_prompt("t", "")
        == compaction_prompt("t")
        == ("<conversation>\nt\n</conversation>\n\n" + COMPACTION_PROMPT)
    )
    assert compaction_prompt("t", None, "") == compaction_prompt("t")


def test_file_lists_split_read_from_modified():
    ops = FileOperations(read=("b", "a", "w"), written=("w",), edited=("e", "w"))
    lists = compute_file_lists(ops)
    assert (lists.read_files, lists.modified_files) == (["a", "b"], ["e", "w"])
    assert format_file_operations(lists.read_files, lists.modified_files) == (
        "\n\n<read-files>\na\nb\n</read-files>\n\n<modified-files>\ne\nw\n</modified-files>"
    )
    assert format_file_operations([], ["x"]) == "\n\n<modified-files>\nx\n</modified-files>"
    assert format_file_operations([], []) == ""
