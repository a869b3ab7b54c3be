"""Compaction in Local: threshold compaction cancelled except for the one-time trim after
``new_context``; manual ``/compact`` and overflow write the fixed no-summary compaction at
the latest boundary and open a fresh window (with a turn only after an overflow)."""

from __future__ import annotations

from support.local_rig import call, developer_texts, markers, record_kinds, text, used, window_of

from ctxmodes.session.models import AssistantMessage, CompactionEntry, MessageEntry
from ctxmodes.testing.clock import SimulatedClock
from ctxmodes.windows.budget import CONTEXT_WINDOW_FALLBACK_BUFFER
from ctxmodes.windows.compaction import NO_SUMMARY_COMPACTION_TEXT

WINDOW = 40_000
#: Beyond Pi's threshold (the window minus its 16,384-token reserve).
OVER_THRESHOLD = used(WINDOW - CONTEXT_WINDOW_FALLBACK_BUFFER + 5_000)
#: Enough text for Pi's cut-point search to find something to compact.
BULK = " filler" * 15_000
#: An error text the host recognises as a context overflow.
OVERFLOW = {"stop_reason": "error", "error_message": "prompt is too long: 210000 tokens > 200000"}


def compactions(h) -> list[CompactionEntry]:
    return [e for e in h.entries() if isinstance(e, CompactionEntry)]


def threshold_outcomes(h) -> list[str]:
    """``written`` or ``cancelled`` for each threshold compaction, in order."""
    return [
        "written" if record.entry is not None else "cancelled"
        for record in h.records
        if type(record).__name__ == "CompactionEnded" and record.trigger == "threshold"
    ]


def assert_no_summary(entry: CompactionEntry, boundary, window_id: str) -> None:
    assert entry.summary == NO_SUMMARY_COMPACTION_TEXT
    assert entry.first_kept_entry_id == boundary.id
    assert entry.details == {
        "protocol": 1,
        "strategy": "codex-context-window",
        "windowId": window_id,
    }
    assert entry.from_hook is True


def test_threshold_compaction_is_cancelled_without_a_pending_trim(local) -> None:
    h = local(
        [text("big answer") | OVER_THRESHOLD, text("told to checkpoint") | OVER_THRESHOLD],
        context_window=WINDOW,
    )
    h.prompt("start" + BULK)
    assert compactions(h) == []
    assert threshold_outcomes(h)
    assert set(threshold_outcomes(h)) == {"cancelled"}


def test_the_trim_after_new_context_happens_once_at_the_boundary(local) -> None:
    h = local(
        [
            call("new_context") | used(1_000),
            text("window 1 grows") | OVER_THRESHOLD,
            text("checkpointing") | OVER_THRESHOLD,
            text("still window 1") | OVER_THRESHOLD,
        ],
        context_window=WINDOW,
    )
    h.prompt("start" + BULK)
    h.prompt("more" + BULK)
    _, boundary = markers(h, "window")
    (trim,) = compactions(h)
    assert_no_summary(trim, boundary, window_of(boundary)["currentWindowId"])
    outcomes = threshold_outcomes(h)
    assert outcomes[0] == "written"
    assert outcomes[1:]
    assert set(outcomes[1:]) == {"cancelled"}
    assert len(markers(h, "window")) == 2, "the trim keeps the current window"


def test_an_answer_in_the_trims_millisecond_is_not_checked_against_the_threshold(local) -> None:
    # What made the test above flaky on the wall clock: when the answer after the trim is
    # stamped in the trim's millisecond, Pi (and so the host) takes its usage as older than
    # the trim and checks nothing. A frozen clock makes that case certain.
    h = local(
        [
            call("new_context") | used(1_000),
            text("window 1 grows") | OVER_THRESHOLD,
            text("checkpointing") | OVER_THRESHOLD,
        ],
        context_window=WINDOW,
        clock=SimulatedClock(step_ms=0),
    )
    h.prompt("start" + BULK)
    h.prompt("more" + BULK)
    assert len(compactions(h)) == 1
    assert threshold_outcomes(h) == ["written"]


def test_manual_compact_cuts_at_the_boundary_and_opens_a_window_without_a_turn(local) -> None:
    h = local([text("answer"), text("after compaction")])
    h.prompt("start" + BULK)
    requests_before = len(h.requests())
    h.session.submit("/compact")
    old = markers(h, "window")[0]
    (entry,) = compactions(h)
    assert_no_summary(entry, old, window_of(old)["currentWindowId"])
    _, new = markers(h, "window")
    assert new.parent_id == entry.id
    assert window_of(new)["windowNumber"] == 1
    assert window_of(new)["previousWindowId"] == window_of(old)["currentWindowId"]
    assert "trimPreviousWindow" not in window_of(new)
    assert len(h.requests()) == requests_before, "the new window waits for the next input"
    assert record_kinds(h, "AgentStarted", "CompactionEnded")[-1] == "CompactionEnded"
    h.prompt("next")
    last = h.requests()[-1]
    assert developer_texts(last) == [new.content]
    assert [m.role for m in last.messages] == ["developer", "user"]


def test_overflow_compacts_and_retries_in_a_fresh_window(local) -> None:
    h = local([text("answer"), OVERFLOW, text("retried in the new window")])
    h.prompt("start" + BULK)
    h.prompt("this one overflows" + BULK)
    old, new = markers(h, "window")
    (entry,) = compactions(h)
    assert_no_summary(entry, old, window_of(old)["currentWindowId"])
    assert new.parent_id == entry.id
    assert window_of(new)["windowNumber"] == 1
    failed = [
        e.message
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, AssistantMessage)
        and e.message.stop_reason == "error"
    ]
    assert len(failed) == 1, "the failed answer stays in the file"
    retry = h.requests()[-1]
    assert [m.role for m in retry.messages] == ["developer"]
    assert developer_texts(retry) == [new.content]
    final = h.entries()[-1]
    assert isinstance(final, MessageEntry)
    assert final.parent_id == new.id
    assert final.message.content[0].text == "retried in the new window"
