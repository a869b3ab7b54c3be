"""Replaying Pi's agent sessions: the summaries we would append equal the entries Pi appended.

Each ``agent_*.trace.json`` records operations on a real Pi ``AgentSession`` (with a scripted
model) and every request the model received, summarization requests included. For each
``compact`` and summarizing ``navigateTree`` step we rebuild the step from the session file:
prepare it, run the summarization with a summarizer that answers what Pi's model answered,
append the result to a copy of the session, and compare the entry with Pi's. The requests
our summarizer receives must match Pi's in everything but the wording of the instructions:
number and order of calls, the serialized conversation and its tags, the previous summary,
the user's focus.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any

from ctxmodes.compaction import (
    BRANCH_SUMMARY_PREAMBLE,
    CompactionSettings,
    SummarizerReply,
    collect_entries_for_branch_summary,
    format_file_operations,
    generate_branch_summary,
    generate_compaction_summary,
    prepare_compaction,
)
from ctxmodes.compaction.prompts import SUMMARIZATION_SYSTEM_PROMPT
from ctxmodes.compaction.summarize import NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR
from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import Cost, Usage, UserMessage, to_json

# The trace does not record Pi's compaction settings; any keepRecentTokens from 58 to 79
# reproduces both of agent_compact's cut points, the reserve is Pi's default.
SETTINGS = CompactionSettings(keep_recent_tokens=64)
ZERO_USAGE = Usage(
    input=0,
    output=0,
    cache_read=0,
    cache_write=0,
    total_tokens=0,
    cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
)
CONVERSATION_END = "\n</conversation>\n\n"
PREVIOUS_SUMMARY_END = "\n</previous-summary>\n\n"


class ScriptedSummarizer:
    """Answers with the given texts in order; the first reply carries the whole usage."""

    def __init__(self, texts: Sequence[str], usage: Usage | None) -> None:
        self.texts = list(texts)
        self.usage = usage
        self.calls: list[tuple[str, list[UserMessage], int]] = []

    def __call__(
        self, system_prompt: str, messages: Sequence[UserMessage], max_tokens: int
    ) -> SummarizerReply:
        self.calls.append((system_prompt, list(messages), max_tokens))
        usage = self.usage if len(self.calls) == 1 else ZERO_USAGE
        return SummarizerReply(text=self.texts[len(self.calls) - 1], usage=usage)


def _without_file_lists(summary: str, details: dict[str, Any]) -> str:
    suffix = format_file_operations(details["readFiles"], details["modifiedFiles"])
    assert summary.endswith(suffix)
    return summary[: len(summary) - len(suffix)] if suffix else summary


def _compaction_replies(pi_entry: dict[str, Any], calls: int) -> list[str]:
    """What Pi's model answered, recovered from the summary Pi stored."""
    body = _without_file_lists(pi_entry["summary"], pi_entry["details"])
    if calls == 2:
        return body.split(SPLIT_TURN_SEPARATOR, 1)
    if body.startswith(NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR):
        return [body.removeprefix(NO_PRIOR_HISTORY + SPLIT_TURN_SEPARATOR)]
    return [body]


def _head(text: str) -> str:
    """The conversation block and, when present, the previous-summary block of a prompt."""
    end = text.index(CONVERSATION_END) + len(CONVERSATION_END)
    if text.startswith("<previous-summary>\n", end):
        end = text.index(PREVIOUS_SUMMARY_END, end) + len(PREVIOUS_SUMMARY_END)
    return text[:end]


def _prompt_text(messages: Sequence[Any]) -> str:
    assert len(messages) == 1
    message = messages[0] if isinstance(messages[0], dict) else to_json(messages[0])
    assert message["role"] == "user"
    [block] = message["content"]
    assert block["type"] == "text"
    return str(block["text"])


def _assert_same_requests(
    ours: ScriptedSummarizer, pi_requests: list[dict[str, Any]], focus: str | None
) -> None:
    assert len(ours.calls) == len(pi_requests)
    for (system_prompt, messages, _max_tokens), pi in zip(ours.calls, pi_requests, strict=True):
        assert system_prompt == SUMMARIZATION_SYSTEM_PROMPT
        text, pi_text = _prompt_text(messages), _prompt_text(pi["messages"])
        assert _head(text) == _head(pi_text)
        # The turn-prefix request is the one with the "Original Request" section.
        assert ("## Original Request" in text) == ("## Original Request" in pi_text)
        suffix = f"\n\nAdditional focus: {focus}"
        assert (
            text.endswith(suffix)
            == pi_text.endswith(suffix)
            == (focus is not None and "## Original Request" not in text)
        )


def _pi_entries(corpus: Any, name: str) -> dict[str, dict[str, Any]]:
    lines = corpus.path(name).read_bytes().splitlines()
    return {entry["id"]: entry for entry in map(codec.loads, lines[1:])}


def _assert_same_entry(ours: dict[str, Any] | None, pi: dict[str, Any]) -> None:
    assert ours is not None
    varying = {"id", "timestamp"}
    assert list(ours) == list(pi)
    assert {k: v for k, v in ours.items() if k not in varying} == {
        k: v for k, v in pi.items() if k not in varying
    }


def _compact(step, pi_entry, manager, pending) -> None:
    focus = step["args"][0] if step["args"] else None
    preparation = prepare_compaction(manager.get_branch(step["leafBefore"]), SETTINGS)
    assert preparation is not None
    calls = 2 if preparation.is_split_turn and preparation.messages_to_summarize else 1
    usage = Usage.model_validate(pi_entry["usage"]) if "usage" in pi_entry else None
    summarizer = ScriptedSummarizer(_compaction_replies(pi_entry, calls), usage)
    result = generate_compaction_summary(preparation, summarizer, custom_instructions=focus)
    _assert_same_requests(summarizer, pending[: len(summarizer.calls)], focus)
    del pending[: len(summarizer.calls)]
    manager.branch(step["leafBefore"])
    entry_id = manager.append_compaction(
        result.summary,
        result.first_kept_entry_id,
        result.tokens_before,
        details=result.details,
        from_hook=False,
        usage=result.usage,
    )
    _assert_same_entry(manager.get_entry_json(entry_id), pi_entry)


def _navigate(step, pi_entry, manager, pending) -> None:
    target, options = step["args"][0], step["args"][1]
    focus = options.get("customInstructions")
    collected = collect_entries_for_branch_summary(manager, step["leafBefore"], target)
    body = _without_file_lists(pi_entry["summary"], pi_entry["details"])
    reply = body.removeprefix(BRANCH_SUMMARY_PREAMBLE)
    usage = Usage.model_validate(pi_entry["usage"]) if "usage" in pi_entry else None
    summarizer = ScriptedSummarizer([reply], usage)
    result = generate_branch_summary(
        collected.entries,
        summarizer,
        custom_instructions=focus,
        replace_instructions=bool(options.get("replaceInstructions")),
    )
    _assert_same_requests(summarizer, pending[: len(summarizer.calls)], focus)
    del pending[: len(summarizer.calls)]
    # Pi's rule: returning to a user message reopens it for editing, so the summary hangs
    # below that message's parent; any other target keeps its place.
    target_entry = manager.get_entry_json(target)
    assert target_entry is not None
    is_user = target_entry["type"] == "message" and target_entry["message"]["role"] == "user"
    new_leaf = target_entry["parentId"] if is_user else target
    manager.branch(step["leafBefore"])
    entry_id = manager.branch_with_summary(
        new_leaf,
        result.summary,
        details=result.details,
        from_hook=False,
        usage=result.usage,
    )
    _assert_same_entry(manager.get_entry_json(entry_id), pi_entry)


def test_summaries_match_pi(corpus, trace_case, tmp_path):
    trace = corpus.load(trace_case, ".trace.json")
    pi_entries = _pi_entries(corpus, trace_case)
    summarizing = _pi_summarization_prompt(trace)
    pending = [r for r in trace["llmRequests"] if r["systemPrompt"] == summarizing]
    copy = tmp_path / "session.jsonl"
    shutil.copyfile(corpus.path(trace_case), copy)
    replayed = 0
    with SessionManager.open(copy) as manager:
        for step in trace["steps"]:
            appended = [pi_entries[a["id"]] for a in step["appended"]]
            if step["op"] == "compact":
                [pi_entry] = appended
                _compact(step, pi_entry, manager, pending)
                replayed += 1
            elif step["op"] == "navigateTree":
                summaries = [e for e in appended if e["type"] == "branch_summary"]
                if summaries:
                    _navigate(step, summaries[0], manager, pending)
                    replayed += 1
    assert pending == []
    if trace_case == "agent_navigate_no_summary":
        assert replayed == 0
    else:
        assert replayed > 0


def _pi_summarization_prompt(trace: dict[str, Any]) -> str | None:
    """Pi's summarization system prompt: any prompt but the session's own (which names the
    working directory). ``None`` when the trace made no summarization request."""
    prompts = {request["systemPrompt"] for request in trace["llmRequests"]}
    candidates = {p for p in prompts if "Current working directory" not in p}
    assert len(candidates) <= 1
    return next(iter(candidates), None)
