"""Summarization requests and the session's thinking level, as Pi 0.85 passes it: compaction
calls (history and turn prefix) ask a reasoning model for the session's level unless it is
``off``; branch summaries ask for none."""

from __future__ import annotations

import pytest
from support.host_rig import text_response

from ctxmodes import NavigationRequest
from ctxmodes.compaction import CompactionSettings
from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.host.trace import request_json
from ctxmodes.session import UserMessage
from ctxmodes.session.manager import SessionManager

SMALL_KEEP = HostOptions(
    compaction=CompactionSettings(keep_recent_tokens=10), thinking_level="high"
)


def _summaries(rig) -> dict[str, set[str | None]]:
    found: dict[str, set[str | None]] = {}
    for record in rig.of(records.ProviderRequested):
        found.setdefault(record.request.purpose, set()).add(record.request.reasoning)
    return found


def _session(make_rig, *, reasoning: bool, options: HostOptions = SMALL_KEEP):
    rig = make_rig(
        [text_response("answer " * 30), text_response("second answer " * 10)],
        summaries=["history summary", "turn prefix", "branch summary"],
        options=options,
        reasoning=reasoning,
    )
    rig.session.prompt("question " * 30)
    rig.session.prompt("another question " * 10)
    return rig


def test_compaction_asks_a_reasoning_model_for_the_sessions_level(make_rig):
    rig = _session(make_rig, reasoning=True)
    # The session's level is the branch's latest thinking_level_change, not the start option.
    rig.session.session_manager.append_thinking_level_change("minimal")
    rig.clear()
    rig.session.compact()
    requests = rig.of(records.ProviderRequested)
    assert [r.request.purpose for r in requests] == ["compaction", "compaction"]
    assert {r.request.reasoning for r in requests} == {"minimal"}
    assert request_json(requests[0].request, "scripted")["reasoning"] == "minimal"


@pytest.mark.parametrize(("reasoning", "level"), [(False, "high"), (True, "off")])
def test_no_level_for_other_models_or_when_off(make_rig, reasoning, level):
    rig = _session(make_rig, reasoning=reasoning)
    rig.session.session_manager.append_thinking_level_change(level)
    rig.clear()
    rig.session.compact()
    requests = rig.of(records.ProviderRequested)
    assert requests
    assert {r.request.reasoning for r in requests} == {None}
    assert "reasoning" not in request_json(requests[0].request, "scripted")


def test_branch_summaries_ask_for_no_level(make_rig):
    rig = _session(make_rig, reasoning=True)
    first_user = next(
        e for e in rig.session.session_manager.get_branch() if getattr(e, "type", "") == "message"
    )
    rig.clear()
    rig.session.navigate_tree(NavigationRequest(first_user.id, summarize=True))
    purposes = _summaries(rig)
    assert purposes == {"branch_summary": {None}}


# Turn requests carry the level Pi's agent state holds: the session's when it opens, then
# each level recorded since; a navigation keeps it, and "off" is no level at all.


def _turn_levels(rig) -> list[str | None]:
    return [
        r.request.reasoning
        for r in rig.of(records.ProviderRequested)
        if r.request.purpose == "turn"
    ]


def test_turns_ask_for_the_level_recorded_since_the_start(make_rig):
    rig = make_rig([text_response("one"), text_response("two")], options=SMALL_KEEP, reasoning=True)
    rig.session.prompt("first")
    rig.session.session_manager.append_thinking_level_change("minimal")
    rig.session.prompt("second")
    assert _turn_levels(rig) == ["high", "minimal"]


def test_a_resumed_session_keeps_its_own_level(make_rig, tmp_path):
    manager = SessionManager.create(tmp_path / "project", tmp_path / "sessions")
    manager.append_thinking_level_change("low")
    manager.append_message(UserMessage(content="earlier", timestamp=1))
    rig = make_rig([text_response("one")], options=SMALL_KEEP, reasoning=True, manager=manager)
    rig.session.prompt("first")
    assert _turn_levels(rig) == ["low"]
    types = rig.session.session_manager.get_branch_types()
    assert types.count("thinking_level_change") == 1


def test_a_navigation_keeps_the_level_and_off_asks_for_none(make_rig):
    rig = make_rig(
        [text_response("one"), text_response("two"), text_response("three")],
        options=SMALL_KEEP,
        reasoning=True,
    )
    rig.session.prompt("first")
    manager = rig.session.session_manager
    before = manager.get_leaf_id()
    manager.append_thinking_level_change("xhigh")
    rig.session.navigate_tree(NavigationRequest(before, summarize=False))
    assert manager.build_session_context().thinking_level == "high"
    rig.session.prompt("second")
    manager.append_thinking_level_change("off")
    rig.session.prompt("third")
    assert _turn_levels(rig) == ["high", "xhigh", None]
