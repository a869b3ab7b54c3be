from __future__ import annotations

import pytest

from ctxmodes.compaction import (
    BRANCH_SUMMARY_PREAMBLE,
    NO_CONTENT_SUMMARY,
    CompactionSettings,
    SummarizationError,
    SummarizerFailure,
    SummarizerReply,
    compaction_requests,
    generate_branch_summary,
    generate_compaction_summary,
    prepare_compaction,
)
from ctxmodes.compaction.prompts import (
    BRANCH_SUMMARY_PROMPT,
    COMPACTION_PROMPT,
    SUMMARIZATION_SYSTEM_PROMPT,
    TURN_PREFIX_PROMPT,
    UPDATE_PROMPT,
)
from ctxmodes.compaction.requests import branch_request
from ctxmodes.compaction.summarize import NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR, combine_usage
from ctxmodes.session.models import Cost, Usage, to_json


class Recorder:
    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []

    def __call__(self, system_prompt, messages, max_tokens):
        self.calls.append((system_prompt, [to_json(m) for m in messages], max_tokens))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def prompt(self, index: int) -> str:
        [message] = self.calls[index][1]
        [block] = message["content"]
        return block["text"]


def _usage(n: int, **extra) -> Usage:
    return Usage(
        input=n,
        output=n,
        cache_read=0,
        cache_write=0,
        total_tokens=2 * n,
        cost=Cost(input=0.5, output=0, cache_read=0, cache_write=0, total=0.5),
        **extra,
    )


def _split_turn_branch(branch, *, history: bool):
    if history:
        branch.user("first task")
        branch.assistant(branch.tool_call("read", path="notes.md"))
        branch.tool_result("notes")
    branch.user("second task")
    branch.assistant(branch.tool_call("edit", path="app.py"))
    branch.tool_result("edited")
    branch.assistant(branch.text("x" * 400))
    return prepare_compaction(branch.entries, CompactionSettings(keep_recent_tokens=50))


def test_a_split_turn_makes_two_calls_and_joins_them(branch):
    preparation = _split_turn_branch(branch, history=True)
    assert preparation is not None
    assert preparation.is_split_turn
    summarizer = Recorder(
        SummarizerReply(text="history", usage=_usage(1)),
        SummarizerReply(text="prefix", usage=_usage(2, reasoning=3)),
    )
    result = generate_compaction_summary(preparation, summarizer, custom_instructions="tests")
    assert result.summary == (
        "history" + SPLIT_TURN_SEPARATOR + "prefix"
        "\n\n<read-files>\nnotes.md\n</read-files>\n\n<modified-files>\napp.py\n</modified-files>"
    )
    assert to_json(result.details) == {"readFiles": ["notes.md"], "modifiedFiles": ["app.py"]}
    assert result.first_kept_entry_id == preparation.first_kept_entry_id
    assert result.tokens_before == preparation.tokens_before
    assert result.usage == combine_usage(_usage(1), _usage(2, reasoning=3))
    assert to_json(result.usage)["reasoning"] == 3
    assert "cacheWrite1h" not in to_json(result.usage)
    # History first (with the user's focus), then the turn prefix (without it).
    assert [call[0] for call in summarizer.calls] == [SUMMARIZATION_SYSTEM_PROMPT] * 2
    assert [call[2] for call in summarizer.calls] == [13107, 8192]
    history, prefix = summarizer.prompt(0), summarizer.prompt(1)
    assert history.startswith("<conversation>\n[User]: first task")
    assert history.endswith(COMPACTION_PROMPT + "\n\nAdditional focus: tests")
    assert prefix == (
        "<conversation>\n[User]: second task\n\n[Assistant tool calls]: "
        'edit(path="app.py")\n\n[Tool result]: edited\n</conversation>\n\n' + TURN_PREFIX_PROMPT
    )


def test_a_split_first_turn_has_no_prior_history(branch):
    preparation = _split_turn_branch(branch, history=False)
    assert preparation is not None
    assert preparation.messages_to_summarize == []
    summarizer = Recorder("prefix only")
    result = generate_compaction_summary(preparation, summarizer, model_max_tokens=1000)
    assert result.summary.startswith(NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR + "prefix only")
    assert result.usage is None
    assert [call[2] for call in summarizer.calls] == [1000]


def test_an_update_wraps_the_previous_summary(branch):
    branch.user("q")
    branch.assistant()
    branch.compaction("e1", summary="old summary")
    branch.user("q2")
    branch.assistant()
    branch.user("q3")
    preparation = prepare_compaction(branch.entries, CompactionSettings(keep_recent_tokens=1))
    assert preparation is not None
    [request] = compaction_requests(preparation)
    [message] = request.messages
    text = to_json(message)["content"][0]["text"]
    assert "\n</conversation>\n\n<previous-summary>\nold summary\n</previous-summary>\n\n" in text
    assert text.endswith(UPDATE_PROMPT)


def test_failures_name_the_call_that_failed(branch):
    preparation = _split_turn_branch(branch, history=True)
    assert preparation is not None
    failing = Recorder("fine", SummarizerFailure("overloaded"))
    with pytest.raises(SummarizationError, match=r"^Turn prefix summarization failed: overloaded$"):
        generate_compaction_summary(preparation, failing)
    with pytest.raises(SummarizationError, match=r"^Summarization failed: "):
        generate_compaction_summary(preparation, Recorder(SummarizerFailure("x")))


def test_a_branch_summary_starts_with_the_preamble(branch):
    branch.user("q")
    branch.assistant(branch.tool_call("write", path="new.py"))
    summarizer = Recorder(SummarizerReply(text="## Goal\nstuff", usage=_usage(4)))
    result = generate_branch_summary(branch.entries, summarizer, custom_instructions="files")
    assert result.summary == (
        BRANCH_SUMMARY_PREAMBLE + "## Goal\nstuff\n\n<modified-files>\nnew.py\n</modified-files>"
    )
    assert to_json(result.details) == {"readFiles": [], "modifiedFiles": ["new.py"]}
    assert result.usage == _usage(4)
    assert summarizer.calls[0][2] == 4096
    assert summarizer.prompt(0).endswith(BRANCH_SUMMARY_PROMPT + "\n\nAdditional focus: files")


def test_replaced_instructions_stand_alone(branch):
    branch.user("q")
    request = branch_request(
        [branch.entries[0].message],
        custom_instructions="Only list decisions.",
        replace_instructions=True,
        model_max_tokens=100,
    )
    text = to_json(request.messages[0])["content"][0]["text"]
    assert text == "<conversation>\n[User]: q\n</conversation>\n\nOnly list decisions."
    assert request.max_tokens == 100


def test_a_branch_without_messages_needs_no_call(branch):
    branch.tool_result("only a result")
    branch.label()
    result = generate_branch_summary(branch.entries, Recorder())
    assert result.summary == NO_CONTENT_SUMMARY
    assert to_json(result.details) == {"readFiles": [], "modifiedFiles": []}
    branch.user("q")
    with pytest.raises(SummarizationError, match=r"^Branch summarization failed: boom$"):
        generate_branch_summary(branch.entries, Recorder(SummarizerFailure("boom")))


def test_the_branch_budget_follows_the_context_window(branch):
    branch.user("a" * 4000)  # 1000 tokens
    branch.user("b" * 40)
    summarizer = Recorder("s", "s")
    generate_branch_summary(branch.entries, summarizer, context_window=600, reserve_tokens=100)
    assert "a" * 100 not in summarizer.prompt(0)
    generate_branch_summary(branch.entries, summarizer)
    assert "a" * 4000 in summarizer.prompt(1)
