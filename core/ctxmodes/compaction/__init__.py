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

from typing import TYPE_CHECKING

from ctxmodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ctxmodes.compaction.branch_summary import (
        BRANCH_SUMMARY_MAX_TOKENS,
        NO_CONTENT_SUMMARY,
        BranchCollection,
        BranchPreparation,
        collect_entries_for_branch_summary,
        prepare_branch_entries,
    )
    from ctxmodes.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index
    from ctxmodes.compaction.errors import (
        CompactionError,
        MalformedMessageError,
        SummarizationError,
    )
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
    from ctxmodes.compaction.settings import (
        BranchSummarySettings,
        CompactionSettings,
        should_compact,
    )
    from ctxmodes.compaction.summarize import (
        BranchSummaryResult,
        CompactionResult,
        Summarizer,
        SummarizerFailure,
        SummarizerReply,
        generate_branch_summary,
        generate_compaction_summary,
    )
    from ctxmodes.compaction.summary_text import BRANCH_SUMMARY_PREAMBLE, summary_goal
    from ctxmodes.compaction.tokens import (
        ContextTokenEstimate,
        calculate_context_tokens,
        estimate_context_tokens,
        estimate_messages_tokens,
        estimate_tokens,
        get_last_assistant_usage,
    )

#: Public name → the module that defines it, imported on first use: drawing a session
#: needs summary_goal alone, not the models every other function here reads.
_EXPORTS: dict[str, str] = {
    "BRANCH_SUMMARY_MAX_TOKENS": "ctxmodes.compaction.branch_summary",
    "BRANCH_SUMMARY_PREAMBLE": "ctxmodes.compaction.summary_text",
    "NO_CONTENT_SUMMARY": "ctxmodes.compaction.branch_summary",
    "BranchCollection": "ctxmodes.compaction.branch_summary",
    "BranchPreparation": "ctxmodes.compaction.branch_summary",
    "collect_entries_for_branch_summary": "ctxmodes.compaction.branch_summary",
    "prepare_branch_entries": "ctxmodes.compaction.branch_summary",
    "summary_goal": "ctxmodes.compaction.summary_text",
    "CutPoint": "ctxmodes.compaction.cut_point",
    "find_cut_point": "ctxmodes.compaction.cut_point",
    "find_turn_start_index": "ctxmodes.compaction.cut_point",
    "CompactionError": "ctxmodes.compaction.errors",
    "MalformedMessageError": "ctxmodes.compaction.errors",
    "SummarizationError": "ctxmodes.compaction.errors",
    "FileListDetails": "ctxmodes.compaction.file_ops",
    "FileOperations": "ctxmodes.compaction.file_ops",
    "compute_file_lists": "ctxmodes.compaction.file_ops",
    "format_file_operations": "ctxmodes.compaction.file_ops",
    "CompactionBoundary": "ctxmodes.compaction.prepare",
    "CompactionPreparation": "ctxmodes.compaction.prepare",
    "find_compaction_boundary": "ctxmodes.compaction.prepare",
    "prepare_compaction": "ctxmodes.compaction.prepare",
    "SummaryRequest": "ctxmodes.compaction.requests",
    "compaction_requests": "ctxmodes.compaction.requests",
    "serialize_conversation": "ctxmodes.compaction.serialize",
    "BranchSummarySettings": "ctxmodes.compaction.settings",
    "CompactionSettings": "ctxmodes.compaction.settings",
    "should_compact": "ctxmodes.compaction.settings",
    "BranchSummaryResult": "ctxmodes.compaction.summarize",
    "CompactionResult": "ctxmodes.compaction.summarize",
    "Summarizer": "ctxmodes.compaction.summarize",
    "SummarizerFailure": "ctxmodes.compaction.summarize",
    "SummarizerReply": "ctxmodes.compaction.summarize",
    "generate_branch_summary": "ctxmodes.compaction.summarize",
    "generate_compaction_summary": "ctxmodes.compaction.summarize",
    "ContextTokenEstimate": "ctxmodes.compaction.tokens",
    "calculate_context_tokens": "ctxmodes.compaction.tokens",
    "estimate_context_tokens": "ctxmodes.compaction.tokens",
    "estimate_messages_tokens": "ctxmodes.compaction.tokens",
    "estimate_tokens": "ctxmodes.compaction.tokens",
    "get_last_assistant_usage": "ctxmodes.compaction.tokens",
}

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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
