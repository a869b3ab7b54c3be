"""Compaction through the host: manual, after a run (threshold), and overflow recovery."""

from __future__ import annotations

import threading

import pytest
from support.host_rig import BlockingTool, EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes import hookimpl
from ctxmodes.compaction import CompactionSettings, estimate_messages_tokens
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import CompactionDecision
from ctxmodes.host import records
from ctxmodes.host.compactor import CompactionCancelled
from ctxmodes.host.options import HostOptions
from ctxmodes.session.models import CompactionSummaryMessage

SMALL_KEEP = HostOptions(compaction=CompactionSettings(keep_recent_tokens=10))


class Hooks:
    """Records the compaction hooks; ``decision`` is what ``before_compact`` returns."""

    def __init__(self, decision: CompactionDecision | None = None) -> None:
        self.decision = decision
        self.calls: list[tuple[str, object]] = []

    @hookimpl
    def ctx_session_before_compact(self, session, request):
        self.calls.append(("before", request))
        return self.decision

    @hookimpl
    def ctx_session_compact(self, session, event):
        self.calls.append(("after", event))


def test_manual_compaction(make_rig):
    hooks = Hooks()
    rig = make_rig(
        [text_response("answer " * 30), text_response("second answer " * 10)],
        summaries=["summary text", "turn prefix"],
        plugins=[hooks],
        options=SMALL_KEEP,
    )
    rig.session.prompt("question " * 30)
    rig.session.prompt("another question " * 10)
    rig.clear()
    entry = rig.session.compact("focus on answers")
    # History, then the first part of the turn the cut splits: two calls.
    assert rig.types() == [
        "compaction_start",
        "session_before_compact",
        "provider_request",
        "provider_request",
        "session_compact",
        "compaction_end",
    ]
    stored = rig.file_entries()[-1]
    assert stored["type"] == "compaction"
    assert stored["id"] == entry.id
    assert stored["fromHook"] is False
    assert stored["details"] == {"readFiles": [], "modifiedFiles": []}
    assert "summary text" in stored["summary"]
    before, after = hooks.calls
    assert before[1].trigger == "manual"
    assert before[1].custom_instructions == "focus on answers"
    assert after[1].entry.id == entry.id
    assert after[1].from_plugin is False
    # The context now starts with the summary.
    assert isinstance(rig.session.messages[0], CompactionSummaryMessage)
    assert "agent_settled" not in rig.types()
    request = rig.of(records.ProviderRequested)[0].request
    assert request.purpose == "compaction"
    assert "Additional focus: focus on answers" in request.messages[0].content[0].text
    # Pi's estimate of what is left: the summary and the kept messages, no usage figure.
    (ended,) = rig.of(records.CompactionEnded)
    left = estimate_messages_tokens(list(rig.session.messages))
    assert ended.estimated_tokens_after == left > 0


def test_a_plugin_supplies_or_cancels_the_compaction(make_rig):
    hooks = Hooks(CompactionDecision(summary="plugin summary", details={"mine": True}))
    rig = make_rig(
        [text_response("a " * 40), text_response("b " * 40)], plugins=[hooks], options=SMALL_KEEP
    )
    rig.session.prompt("q " * 40)
    calls = rig.provider.calls
    entry = rig.session.compact()
    assert rig.provider.calls == calls  # no summarization call
    stored = rig.file_entries()[-1]
    assert stored["summary"] == "plugin summary"
    assert stored["details"] == {"mine": True}
    assert stored["fromHook"] is True
    assert stored["firstKeptEntryId"] == hooks.calls[0][1].preparation.first_kept_entry_id
    assert entry.tokens_before == hooks.calls[0][1].preparation.tokens_before

    rig.session.prompt("r " * 40)
    hooks.decision = CompactionDecision(cancel=True)
    with pytest.raises(CompactionCancelled, match="Compaction cancelled"):
        rig.session.compact()
    ended = rig.of(records.CompactionEnded)[-1]
    assert ended.aborted
    assert ended.entry is None


def test_nothing_to_compact(make_rig):
    rig = make_rig([text_response("hi")])
    rig.session.prompt("hello")
    with pytest.raises(CtxmodesError, match=r"Nothing to compact \(session too small\)"):
        rig.session.compact()
    assert rig.of(records.CompactionEnded)[-1].error.startswith("Compaction failed: ")


def test_threshold_compaction_after_a_run_before_settling(make_rig):
    options = HostOptions(compaction=CompactionSettings(reserve_tokens=1000, keep_recent_tokens=10))
    # The answer reports a context of 1,500 tokens in a 2,000-token window: over the limit.
    rig = make_rig(
        [text_response("big answer " * 10, usage={"totalTokens": 1500})],
        summaries=["auto summary"],
        options=options,
        context_window=2000,
    )
    rig.session.prompt("question " * 10)
    types = rig.types()
    assert types.index("agent_end") < types.index("compaction_start")
    assert types.index("compaction_end") < types.index("agent_settled")
    assert types.count("agent_settled") == 1
    assert rig.of(records.CompactionEnded)[0].trigger == "threshold"
    assert rig.file_entries()[-1]["type"] == "compaction"


def test_overflow_is_compacted_and_retried_once(make_rig):
    options = HostOptions(compaction=CompactionSettings(keep_recent_tokens=10))
    overflow = {"stop_reason": "error", "error_message": "prompt is too long: 300000 tokens"}
    rig = make_rig(
        [text_response("earlier " * 30), overflow, text_response("after recovery")],
        summaries=["overflow summary"],
        options=options,
    )
    rig.session.prompt("first " * 30)
    rig.session.prompt("second")
    types = rig.types()
    assert types.count("agent_start") == 3  # two prompts, plus the retry
    assert types.count("agent_settled") == 2
    ended = rig.of(records.CompactionEnded)
    assert [(e.trigger, e.will_retry) for e in ended] == [("overflow", True)]
    entries = rig.file_entries()
    kinds = [e["message"]["role"] if e["type"] == "message" else e["type"] for e in entries]
    # The failed answer stays in the file; the retry continues after the compaction.
    assert kinds[-4:] == ["user", "assistant", "compaction", "assistant"]
    assert entries[-3]["message"]["stopReason"] == "error"
    assert entries[-1]["message"]["content"][0]["text"] == "after recovery"


def test_overflow_recovery_is_attempted_only_once(make_rig):
    options = HostOptions(compaction=CompactionSettings(keep_recent_tokens=10))
    overflow = {"stop_reason": "error", "error_message": "prompt is too long"}
    rig = make_rig(
        [text_response("earlier " * 30), overflow, overflow],
        summaries=["s1", "s2"],
        options=options,
    )
    rig.session.prompt("first " * 30)
    rig.session.prompt("second")
    ended = rig.of(records.CompactionEnded)
    assert [e.error is None for e in ended] == [True, False]
    assert "after one compact-and-retry attempt" in ended[-1].error
    assert rig.types().count("agent_settled") == 2


def test_compaction_between_turns_when_tool_results_fill_the_window(make_rig):
    options = HostOptions(
        compaction=CompactionSettings(reserve_tokens=1000, keep_recent_tokens=250)
    )
    big_output = "x" * 800  # about 200 tokens
    rig = make_rig(
        [
            text_response("first answer"),
            {
                "tool_calls": [{"name": "echo", "arguments": {"text": big_output}}],
                "usage": {"totalTokens": 2900},
            },
            text_response("after the tool"),
        ],
        # The cut splits the running turn: a history summary and one of the turn's start.
        summaries=["mid-run summary", "turn start"],
        plugins=[ToolsPlugin(EchoTool())],
        options=options,
        context_window=4000,
    )
    rig.session.prompt("first question")
    rig.session.prompt("second question " * 12)
    types = rig.types()
    run = types[types.index("agent_start", types.index("agent_settled")) :]
    assert run.index("compaction_start") > run.index("turn_end")
    assert run.index("compaction_end") < run.index("turn_start", run.index("turn_end"))
    assert run.count("agent_settled") == 1
    kinds = [
        e["message"]["role"] if e["type"] == "message" else e["type"] for e in rig.file_entries()
    ]
    assert kinds[-3:] == ["toolResult", "compaction", "assistant"]
    assert rig.ui.notifications == []
    # The request after the compaction starts from the summary.
    last = rig.of(records.ProviderRequested)[-1].request
    assert last.messages[0].content[0].text.startswith("The conversation history before this point")


def test_manual_compaction_from_another_thread_stops_the_run_first(make_rig):
    blocking = BlockingTool()
    rig = make_rig(
        [text_response("earlier " * 30), tool_response("block")],
        summaries=["summary"],
        plugins=[ToolsPlugin(blocking)],
        options=SMALL_KEEP,
    )
    rig.session.prompt("first " * 30)
    compacted = []
    worker = threading.Thread(
        target=lambda: (blocking.started.wait(5), compacted.append(rig.session.compact()))
    )
    worker.start()
    rig.session.prompt("second")
    worker.join(10)
    assert compacted
    kinds = [
        e["message"]["role"] if e["type"] == "message" else e["type"] for e in rig.file_entries()
    ]
    assert kinds[-4:] == ["assistant", "toolResult", "assistant", "compaction"]
    assert rig.file_entries()[-2]["message"]["stopReason"] == "aborted"
