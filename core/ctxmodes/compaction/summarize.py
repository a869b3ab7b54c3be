"""Run the summarization calls through a model the host supplies, and assemble the summaries.

The host plugs its model in as a :class:`Summarizer`. This module decides what is asked, in
which order, and how the replies become the text of a compaction or branch-summary entry;
the results carry every field the host appends (``summary``, ``firstKeptEntryId``,
``tokensBefore``, ``details``, ``usage``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Protocol

from pydantic import BaseModel, ConfigDict

from ctxmodes.compaction._access import EntryLike
from ctxmodes.compaction.branch_summary import (
    NO_CONTENT_SUMMARY,
    branch_token_budget,
    prepare_branch_entries,
)
from ctxmodes.compaction.errors import CompactionError, SummarizationError
from ctxmodes.compaction.file_ops import FileListDetails, compute_file_lists, format_file_operations
from ctxmodes.compaction.prepare import CompactionPreparation
from ctxmodes.compaction.requests import (
    SummaryKind,
    SummaryRequest,
    branch_request,
    compaction_requests,
)
from ctxmodes.compaction.settings import DEFAULT_RESERVE_TOKENS
from ctxmodes.compaction.summary_text import BRANCH_SUMMARY_PREAMBLE
from ctxmodes.compaction.tokens import Number
from ctxmodes.session.models import Usage, UserMessage

#: Stands in for the history summary when a split turn is the first thing to summarize.
NO_PRIOR_HISTORY: Final = "No prior history."
#: Joins the history summary and the summary of a split turn's first part.
SPLIT_TURN_SEPARATOR: Final = "\n\n---\n\n**Turn Context (split turn):**\n\n"
#: Reason a summarizer should give when its reply was cut off by ``max_tokens``: a partial
#: summary must never become a checkpoint.
TOKEN_CAP_REASON: Final = "generation hit the token cap and the summary is incomplete"

_FAILURE_LABELS: Final[dict[SummaryKind, str]] = {
    "history": "Summarization",
    "turn_prefix": "Turn prefix summarization",
    "branch": "Branch summarization",
}


class SummarizerReply(BaseModel):
    """A summarizer's answer when it also reports what the call cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage | None = None


class SummarizerFailure(CompactionError):
    """Raised by a summarizer whose call produced no usable summary.

    ``reason`` is the provider's error message, or :data:`TOKEN_CAP_REASON` for a reply cut
    off by ``max_tokens``. It reaches the user as ``<what> failed: <reason>``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Summarizer(Protocol):
    """A model call: system prompt and messages in, the reply's text out.

    It must not offer tools, and should not cache the prompt (each request is one-off). It
    returns the text of the reply's text blocks joined with newlines, or a
    :class:`SummarizerReply` to report usage as well. To abort, raise anything; to report a
    failed call, raise :class:`SummarizerFailure`.
    """

    def __call__(
        self, system_prompt: str, messages: Sequence[UserMessage], max_tokens: int
    ) -> str | SummarizerReply: ...


class CompactionResult(BaseModel):
    """The content of a compaction entry."""

    model_config = ConfigDict(frozen=True)

    summary: str
    first_kept_entry_id: str
    tokens_before: Number
    details: FileListDetails
    #: Combined usage of the calls, when the summarizer reported it.
    usage: Usage | None = None


class BranchSummaryResult(BaseModel):
    """The content of a branch-summary entry."""

    model_config = ConfigDict(frozen=True)

    summary: str
    details: FileListDetails
    usage: Usage | None = None


def _ask(summarizer: Summarizer, request: SummaryRequest) -> SummarizerReply:
    try:
        reply = summarizer(request.system_prompt, request.messages, request.max_tokens)
    except SummarizerFailure as failure:
        label = _FAILURE_LABELS[request.kind]
        raise SummarizationError(f"{label} failed: {failure.reason}") from failure
    return reply if isinstance(reply, SummarizerReply) else SummarizerReply(text=reply)


def _sum_optional(first: Usage, second: Usage, name: str) -> dict[str, Any]:
    a, b = getattr(first, name), getattr(second, name)
    if a is None and b is None:
        return {}
    return {name: (a or 0) + (b or 0)}


def combine_usage(first: Usage, second: Usage) -> Usage:
    """The usage of two calls together (optional counters only when either reports them)."""
    cost = {
        name: getattr(first.cost, name) + getattr(second.cost, name)
        for name in ("input", "output", "cache_read", "cache_write", "total")
    }
    return Usage.model_validate(
        {
            "input": first.input + second.input,
            "output": first.output + second.output,
            "cache_read": first.cache_read + second.cache_read,
            "cache_write": first.cache_write + second.cache_write,
            **_sum_optional(first, second, "cache_write_1h"),
            **_sum_optional(first, second, "reasoning"),
            "total_tokens": first.total_tokens + second.total_tokens,
            "cost": cost,
        }
    )


def _combined(replies: Sequence[SummarizerReply]) -> Usage | None:
    usages = [reply.usage for reply in replies if reply.usage is not None]
    if not usages:
        return None
    total = usages[0]
    for usage in usages[1:]:
        total = combine_usage(total, usage)
    return total


def generate_compaction_summary(
    preparation: CompactionPreparation,
    summarizer: Summarizer,
    *,
    custom_instructions: str | None = None,
    model_max_tokens: int | None = None,
) -> CompactionResult:
    """Summarize a prepared compaction; the calls run one after the other.

    A split turn yields ``<history summary>`` + :data:`SPLIT_TURN_SEPARATOR` + ``<turn-prefix
    summary>``. The file lists are appended to the text and returned as ``details``.

    :raises SummarizationError: when the summarizer raises :class:`SummarizerFailure`.
    """
    requests = compaction_requests(
        preparation, custom_instructions=custom_instructions, model_max_tokens=model_max_tokens
    )
    replies = [_ask(summarizer, request) for request in requests]
    if requests[-1].kind == "turn_prefix":
        history = replies[0].text if len(replies) == 2 else NO_PRIOR_HISTORY
        summary = history + SPLIT_TURN_SEPARATOR + replies[-1].text
    else:
        summary = replies[0].text
    files = compute_file_lists(preparation.file_ops)
    return CompactionResult(
        summary=summary + format_file_operations(files.read_files, files.modified_files),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=files,
        usage=_combined(replies),
    )


def generate_branch_summary(
    entries: Sequence[EntryLike],
    summarizer: Summarizer,
    *,
    context_window: int | None = None,
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS,
    model_max_tokens: int | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    summaries: Sequence[EntryLike] | None = None,
) -> BranchSummaryResult:
    """Summarize an abandoned branch (entries oldest first, as collected for the navigation).

    The newest messages that fit ``context_window - reserve_tokens`` are summarized. A branch
    without any message gets :data:`NO_CONTENT_SUMMARY` and no call is made.

    ``summaries``, when the caller knows them, are the branch summaries among ``entries``
    (see :func:`~ctxmodes.compaction.branch_summary.prepare_branch_entries`).

    :raises SummarizationError: when the summarizer raises :class:`SummarizerFailure`.
    """
    budget = branch_token_budget(context_window, reserve_tokens)
    prepared = prepare_branch_entries(entries, budget, summaries=summaries)
    files = compute_file_lists(prepared.file_ops)
    if not prepared.messages:
        return BranchSummaryResult(summary=NO_CONTENT_SUMMARY, details=files)
    request = branch_request(
        prepared.messages,
        custom_instructions=custom_instructions,
        replace_instructions=replace_instructions,
        model_max_tokens=model_max_tokens,
    )
    reply = _ask(summarizer, request)
    text = BRANCH_SUMMARY_PREAMBLE + reply.text
    text += format_file_operations(files.read_files, files.modified_files)
    return BranchSummaryResult(summary=text, details=files, usage=reply.usage)
