"""An answer no later than the latest compaction is ignored by the automatic compaction
checks: Pi compares the answer's timestamp with the compaction entry's, and an answer in the
same millisecond counts as older. The host reproduces the comparison exactly; the real Pi
``AgentSession`` judges the same files."""

from __future__ import annotations

import pytest
from support.host_rig import text_response
from support.pi_oracle import pi_compaction_triggers

from ctxmodes.compaction import CompactionSettings
from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.session.ids import timestamp_ms
from ctxmodes.session.models import AssistantMessage, CompactionEntry, MessageEntry
from ctxmodes.testing.clock import SimulatedClock

WINDOW = 4_000
SETTINGS = CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=10)
OVER_THRESHOLD = {"totalTokens": WINDOW - 500}
#: Pi's decision for answers stamped 1 ms before, in, and 1 ms after the compaction's
#: millisecond (checked by ``test_the_real_pi_makes_the_same_decisions``).
PI_COMPACTS_AFTER = {-1: False, 0: False, 1: True}


def run_answer_at(make_rig, delta_ms: int, clock: SimulatedClock):
    """Compact by hand, then answer with a usage over the threshold, stamped ``delta_ms``
    from the compaction entry's timestamp; return the rig and the answer's entry."""
    stamp: dict[str, int] = {}
    rig = make_rig(
        [text_response("first answer " * 20), text_response("late", usage=OVER_THRESHOLD)],
        summaries=["manual summary", "threshold summary"],
        options=HostOptions(compaction=SETTINGS),
        context_window=WINDOW,
        clock=clock,
        answer_clock=lambda: stamp.get("answer") or clock.now_ms(),
    )
    rig.session.prompt("first question " * 20)
    rig.session.compact()
    manager = rig.session.session_manager
    (compaction,) = [e for e in manager.get_entries() if isinstance(e, CompactionEntry)]
    compaction_ms = timestamp_ms(compaction.timestamp)
    assert compaction_ms is not None
    stamp["answer"] = compaction_ms + delta_ms
    rig.session.prompt("second question")
    answer = next(
        e
        for e in reversed(list(manager.get_entries()))
        if isinstance(e, MessageEntry) and isinstance(e.message, AssistantMessage)
    )
    assert answer.message.timestamp == compaction_ms + delta_ms
    return rig, answer


def compacted_after(rig) -> bool:
    return any(e.trigger == "threshold" for e in rig.of(records.CompactionStarted))


@pytest.mark.parametrize("delta_ms", sorted(PI_COMPACTS_AFTER))
def test_an_answer_in_the_compactions_millisecond_counts_as_older(make_rig, delta_ms) -> None:
    rig, _ = run_answer_at(make_rig, delta_ms, SimulatedClock())
    assert compacted_after(rig) is PI_COMPACTS_AFTER[delta_ms]


@pytest.mark.pi
def test_the_real_pi_makes_the_same_decisions(make_rig) -> None:
    requests = []
    ours = []
    clock = SimulatedClock()
    for delta_ms in sorted(PI_COMPACTS_AFTER):
        rig, answer = run_answer_at(make_rig, delta_ms, clock)
        ours.append(compacted_after(rig))
        model = rig.provider.info
        requests.append(
            {
                "file": str(rig.session.session_manager.session_file),
                "answerId": answer.id,
                "model": {
                    "provider": model.provider,
                    "id": model.id,
                    "contextWindow": model.context_window,
                    "maxTokens": model.max_tokens,
                },
                "settings": SETTINGS.model_dump(by_alias=True),
            }
        )
    pi = [triggers == ["threshold"] for triggers in pi_compaction_triggers(requests)]
    assert pi == ours == [PI_COMPACTS_AFTER[d] for d in sorted(PI_COMPACTS_AFTER)]
