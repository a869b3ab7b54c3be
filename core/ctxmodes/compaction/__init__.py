"""Compaction and branch summarization, computed exactly as Pi 0.85 computes them.

The functions are pure: they read a branch of entries (root first, as
``SessionManager.get_branch()`` returns it; typed models or stored JSON objects) and return
what to summarize, what to keep, and, given a :class:`Summarizer`, the content of the entry
to append. Appending it is the host's job.

Compaction::

    preparation = prepare_compaction(manager.get_branch(), settings)
    if preparation is not None:
        result = generate_compaction_summary(preparation, summarizer)
        manager.append_compaction(result.summary, result.first_kept_entry_id, ...)

Branch summary on navigation::

    collected = collect_entries_for_branch_summary(manager, old_leaf_id, target_id)
    result = generate_branch_summary(collected.entries, summarizer, context_window=...)

Internal package: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from ctxmodes.compaction.branch_summary import (
    BRANCH_SUMMARY_MAX_TOKENS,
    BRANCH_SUMMARY_PREAMBLE,
    NO_CONTENT_SUMMARY,
    BranchCollection,
    BranchPreparation,
    collect_entries_for_branch_summary,
    prepare_branch_entries,
    summary_goal,
)
from ctxmodes.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index
from ctxmodes.compaction.errors import CompactionError, MalformedMessageError, SummarizationError
from ctxmodes.compaction.file_ops import (
    FileListDetails,
    FileOperations,
    compute_file_lists,
    format_file_operations,
)
from ctxmodes.compaction.prepare import (
    CompactionBoundary,
    CompactionPreparation,
    find_compaction_boundary,
    prepare_compaction,
)
from ctxmodes.compaction.requests import SummaryRequest, compaction_requests
from ctxmodes.compaction.serialize import serialize_conversation
from ctxmodes.compaction.settings import BranchSummarySettings, CompactionSettings, should_compact
from ctxmodes.compaction.summarize import (
    BranchSummaryResult,
    CompactionResult,
    Summarizer,
    SummarizerFailure,
    SummarizerReply,
    generate_branch_summary,
    generate_compaction_summary,
)
from ctxmodes.compaction.tokens import (
    ContextTokenEstimate,
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_messages_tokens,
    estimate_tokens,
    get_last_assistant_usage,
)

__all__ = [
    "BRANCH_SUMMARY_MAX_TOKENS",
    "BRANCH_SUMMARY_PREAMBLE",
    "NO_CONTENT_SUMMARY",
    "BranchCollection",
    "BranchPreparation",
    "BranchSummaryResult",
    "BranchSummarySettings",
    "CompactionBoundary",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "ContextTokenEstimate",
    "CutPoint",
    "FileListDetails",
    "FileOperations",
    "MalformedMessageError",
    "SummarizationError",
    "Summarizer",
    "SummarizerFailure",
    "SummarizerReply",
    "SummaryRequest",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compaction_requests",
    "compute_file_lists",
    "estimate_context_tokens",
    "estimate_messages_tokens",
    "estimate_tokens",
    "find_compaction_boundary",
    "find_cut_point",
    "find_turn_start_index",
    "format_file_operations",
    "generate_branch_summary",
    "generate_compaction_summary",
    "get_last_assistant_usage",
    "prepare_branch_entries",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
    "summary_goal",
]
