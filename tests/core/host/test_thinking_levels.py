"""The thinking level a session records, as Pi records it: a new session starts at the run's
level (``--thinking``, or ``provider/id:level``), else its model's own (Pi's
``modelThinkingLevels``), else the configured one (Pi's ``medium`` when none is), clamped to
what its model takes; ``/thinking`` and a model switch record a change only when the level
the model takes changes."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from support.host_rig import BlockingTool, ToolsPlugin, tool_response
from support.terminal import GateTool

from ctxmodes import hookimpl
from ctxmodes.config import load_settings
from ctxmodes.host import records
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.host.options import HostOptions
from ctxmodes.providers import Script, ScriptedProvider
from ctxmodes.session import UserMessage
from ctxmodes.session.manager import SessionManager
from ctxmodes.thinking_levels import REASONING_LEVELS, clamp_thinking_level, split_level_suffix


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
    # Each recorded change is told to listeners (Pi's thinking_level_changed), no other.
    assert [r.level for r in rig.of(records.ThinkingLevelChanged)] == ["high"]


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
    assert [r.level for r in rig.of(records.ThinkingLevelChanged)] == ["off"]


def test_the_clamp_is_pis():
    # Itself, else the next higher, else the next lower; an unknown level is the lowest.
    assert clamp_thinking_level("minimal", ("off", "low", "high")) == "low"
    assert clamp_thinking_level("max", REASONING_LEVELS) == "high"
    assert clamp_thinking_level("medium", ("off",)) == "off"
    assert clamp_thinking_level("enormous", REASONING_LEVELS) == "off"


#: The scripted model's ``provider/model-id``.
SCRIPTED = "scripted/scripted"


@pytest.mark.parametrize(
    ("requested", "per_model", "recorded"),
    [
        (None, "low", "low"),  # the model's own startup level over the default (high)
        ("minimal", "low", "minimal"),  # the run's level over both
        ("max", None, "high"),  # clamped as any level is
        (None, None, "high"),
    ],
)
def test_a_new_session_starts_at_the_runs_level_else_its_models_else_the_default(
    make_rig, requested, per_model, recorded
):
    options = HostOptions(
        thinking_level="high",
        model_thinking_levels={SCRIPTED: per_model} if per_model else {},
        requested_thinking_level=requested,
    )
    rig = make_rig([{"text": "answer"}], reasoning=True, options=options)
    rig.prompt("go")
    assert recorded_levels(rig) == [recorded]
    [request] = rig.requests()
    assert request.reasoning == recorded


def test_an_existing_session_runs_at_the_runs_level_and_records_it_only_where_none_is(
    make_rig, tmp_path
):
    # As Pi with --thinking: a branch that holds a level keeps it in the file (the next
    # run without the flag is back at it); one that holds none records the run's.
    manager = SessionManager.create(tmp_path / "project", tmp_path / "sessions")
    manager.append_thinking_level_change("low")
    manager.append_message(UserMessage(content="earlier", timestamp=1))
    options = HostOptions(requested_thinking_level="minimal")
    rig = make_rig([{"text": "one"}], reasoning=True, options=options, manager=manager)
    rig.prompt("go")
    [request] = rig.requests()
    assert request.reasoning == "minimal"
    assert recorded_levels(rig) == ["low"]
    assert rig.session.thinking_level == "minimal"

    bare = SessionManager.create(tmp_path / "project", tmp_path / "other")
    bare.append_message(UserMessage(content="earlier", timestamp=1))
    rig = make_rig([{"text": "two"}], reasoning=True, options=options, manager=bare)
    assert recorded_levels(rig) == ["minimal"]


def test_a_session_whose_context_holds_no_message_starts_as_a_new_one(make_rig, tmp_path):
    # As Pi's createAgentSession, where "existing" means the context has messages: a fork
    # taken before the first prompt holds only the source's records, and records the model
    # and the level again, the level as a new session's (not the branch's).
    manager = SessionManager.create(tmp_path / "project", tmp_path / "sessions")
    manager.append_model_change("scripted", "scripted")
    manager.append_thinking_level_change("low")
    manager.append_session_info("named before the prompt")
    rig = make_rig([{"text": "one"}], reasoning=True, options=HostOptions(), manager=manager)
    assert [entry.type for entry in rig.entries()][3:] == ["model_change", "thinking_level_change"]
    assert recorded_levels(rig) == ["low", "medium"]
    rig.prompt("go")
    [request] = rig.requests()
    assert request.reasoning == "medium"


def test_switching_to_a_model_with_its_own_level_takes_that_level(make_rig):
    thinker = ScriptedProvider(
        Script.model_validate({"model": "thinker", "responses": [], "reasoning": True})
    )
    options = HostOptions(thinking_level="high", model_thinking_levels={"scripted/thinker": "low"})
    rig = make_rig(reasoning=True, options=options)
    rig.session.set_provider(thinker)
    assert recorded_levels(rig) == ["high", "low"]
    assert rig.session.thinking_level == "low"


@pytest.mark.parametrize(
    ("spec", "split"),
    [
        ("gw/m", ("gw/m", None)),
        ("gw/m:high", ("gw/m", "high")),
        ("gw/m:off", ("gw/m", "off")),
        ("gw/qwen3:8b", ("gw/qwen3:8b", None)),  # an id with a colon is a model first
        ("gw/qwen3:8b:low", ("gw/qwen3:8b", "low")),
        ("gw/m:low:high", ("gw/m", "high")),  # the outermost level wins, as in Pi
        ("gw/m:loud", ("gw/m:loud", None)),  # no level: part of the spec, unknown
        ("gw/n:high", ("gw/n:high", None)),  # no such model before the level
    ],
)
def test_a_model_spec_may_end_in_a_thinking_level_as_pis_model_flag_reads_it(spec, split):
    known = {"gw/m", "gw/qwen3:8b"}
    assert split_level_suffix(spec, known.__contains__) == split


def test_switching_to_a_model_without_its_own_level_takes_the_configured_default(
    make_rig, tmp_path
):
    # As Pi: a defaultThinkingLevel that is set wins over the level the session is at; a
    # default that stands in for none does not.
    configured = tmp_path / "config"
    configured.mkdir()
    (configured / "config.toml").write_text('thinking_level = "low"\n')
    settings = load_settings(environ={"CTXMODES_CONFIG_DIR": str(configured)}).settings
    unset = load_settings(environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "none")}).settings
    for loaded, after in ((settings, "low"), (unset, "high")):
        rig = make_rig(reasoning=True, options=HostOptions.of_settings(loaded))
        rig.session.set_thinking_level("high")
        thinker = ScriptedProvider(
            Script.model_validate({"model": "thinker", "responses": [], "reasoning": True})
        )
        rig.session.set_provider(thinker)
        assert rig.session.thinking_level == after


@pytest.mark.parametrize("from_the_command_line", ["low", None])
def test_thinking_chosen_during_a_run_is_where_a_new_session_starts(
    make_rig, from_the_command_line
):
    # The user's latest choice wins over the level the command line asked for.
    options = HostOptions(requested_thinking_level=from_the_command_line, thinking_level="medium")
    rig = make_rig([{"text": "one"}], reasoning=True, options=options)
    rig.prompt("go")  # a session is new only until it holds a message
    rig.host.set_thinking_level("high")
    rig.host.new_session()
    assert rig.session.thinking_level == "high"
    assert recorded_levels(rig) == ["high"]


def _plain(*answers: str) -> ScriptedProvider:
    responses = [{"text": answer} for answer in answers]
    return ScriptedProvider(Script.model_validate({"model": "plain", "responses": responses}))


def test_a_change_made_while_another_thread_runs_the_agent_is_its_next_requests(make_rig):
    gate = GateTool()
    rig = make_rig([tool_response("gate")], reasoning=True, plugins=[ToolsPlugin(gate)])
    plain = _plain("from plain")
    run = threading.Thread(target=rig.session.prompt, args=("go",))
    run.start()
    try:
        assert gate.entered.wait(10)
        written = len(rig.entries())
        rig.session.set_thinking_level("low")
        rig.session.set_provider(plain)
        # Taken at once, as Pi takes it: what the run's next request will use.
        assert rig.session.provider is plain
        assert rig.session.thinking_level == "off"  # as the new model takes "low"
        # Written by the run itself (the file has one writer), not while the tool runs.
        assert len(rig.entries()) == written
    finally:
        gate.opened.set()
        run.join(10)
    entries = rig.entries()
    tail = [(e.type, getattr(e, "message", None)) for e in entries[written:]]
    assert [kind for kind, _ in tail] == [
        "message",  # the tool's result
        "thinking_level_change",
        "model_change",
        "thinking_level_change",
        "message",  # the answer of the new model
    ]
    assert entries[written + 2].model_id == "plain"
    answer = tail[-1][1]
    assert (answer.model, answer.content[0].text) == ("plain", "from plain")
    assert recorded_levels(rig) == ["medium", "low", "off"]
    assert [r.level for r in rig.of(records.ThinkingLevelChanged)] == ["low", "off"]


def test_a_change_made_during_a_run_that_ends_without_a_request_is_written_as_it_ends(make_rig):
    class SettledPlugin:
        seen: list[list[str]] = []  # noqa: RUF012

        @hookimpl
        def ctx_agent_settled(self, session: Any) -> None:
            self.seen.append(recorded_levels(rig))

    blocking, settled = BlockingTool(), SettledPlugin()
    rig = make_rig(
        [tool_response("block")], reasoning=True, plugins=[ToolsPlugin(blocking), settled]
    )
    run = threading.Thread(target=rig.session.prompt, args=("go",))
    run.start()
    try:
        assert blocking.started.wait(10)
        rig.session.set_thinking_level("high")
        rig.session.set_thinking_level("medium")
    finally:
        rig.session.abort()
        run.join(10)
    # Written when the aborted run ends, before it settles, in the order made.
    assert settled.seen == [["medium", "high", "medium"]]
    assert rig.session.thinking_level == "medium"


def test_a_change_on_the_thread_running_the_agent_is_still_refused(make_rig):
    class SwitchingPlugin:
        refused: list[str] = []  # noqa: RUF012

        @hookimpl
        def ctx_turn_start(self, turn_index: int, session: Any) -> None:
            try:
                rig.session.set_thinking_level("low")
            except SessionBusyError as error:
                self.refused.append(str(error))

    plugin = SwitchingPlugin()
    rig = make_rig([{"text": "answer"}], reasoning=True, plugins=[plugin])
    rig.prompt("go")
    assert plugin.refused == ["Wait for the agent to finish before you change the thinking level."]
    assert recorded_levels(rig) == ["medium"]
