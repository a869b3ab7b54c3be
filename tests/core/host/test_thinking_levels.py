"""The thinking level a session records, as Pi records it: a new session starts at the
configured level (Pi's ``medium`` when none is), clamped to what its model takes; ``/thinking``
and a model switch record a change only when the level the model takes changes."""

from __future__ import annotations

import pytest

from ctxmodes.host.options import HostOptions
from ctxmodes.providers import Script, ScriptedProvider
from ctxmodes.thinking_levels import REASONING_LEVELS, clamp_thinking_level


def recorded_levels(rig) -> list[str]:
    return [e.thinking_level for e in rig.entries() if e.type == "thinking_level_change"]


@pytest.mark.parametrize(
    ("reasoning", "configured", "recorded", "sent"),
    [
        (True, None, "medium", "medium"),  # Pi's default
        (True, "high", "high", "high"),
        (True, "xhigh", "high", "high"),  # the nearest the model takes
        (False, None, "off", None),
        (False, "high", "off", None),
    ],
)
def test_a_new_session_records_the_level_its_model_takes(
    make_rig, reasoning, configured, recorded, sent
):
    options = HostOptions() if configured is None else HostOptions(thinking_level=configured)
    rig = make_rig([{"text": "answer"}], reasoning=reasoning, options=options)
    rig.prompt("go")
    assert recorded_levels(rig) == [recorded]
    [request] = rig.requests()
    assert request.reasoning == sent


def test_thinking_records_only_a_change_of_the_level_taken(make_rig):
    rig = make_rig(reasoning=True)
    rig.session.set_thinking_level("medium")  # already so
    rig.session.set_thinking_level("max")  # taken as high
    rig.session.set_thinking_level("xhigh")  # high again
    assert recorded_levels(rig) == ["medium", "high"]
    assert rig.session.thinking_level == "high"


def test_a_model_switch_carries_the_level_over_as_the_new_model_takes_it(make_rig):
    rig = make_rig(reasoning=True, options=HostOptions(thinking_level="high"))
    plain = ScriptedProvider(Script.model_validate({"model": "plain", "responses": []}))
    rig.session.set_provider(plain)
    types = [e.type for e in rig.entries()]
    assert types[-2:] == ["model_change", "thinking_level_change"]
    assert recorded_levels(rig) == ["high", "off"]
    thinker = ScriptedProvider(
        Script.model_validate({"model": "thinker", "responses": [], "reasoning": True})
    )
    rig.session.set_provider(thinker)  # off is a level it takes: nothing more to record
    assert recorded_levels(rig) == ["high", "off"]


def test_the_clamp_is_pis():
    # Itself, else the next higher, else the next lower; an unknown level is the lowest.
    assert clamp_thinking_level("minimal", ("off", "low", "high")) == "low"
    assert clamp_thinking_level("max", REASONING_LEVELS) == "high"
    assert clamp_thinking_level("medium", ("off",)) == "off"
    assert clamp_thinking_level("enormous", REASONING_LEVELS) == "off"
