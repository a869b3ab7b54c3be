"""Ctrl-C during ``Agent.prompt``: the run is aborted and recorded as an abort, then the
program gets its ``KeyboardInterrupt``; a program's own SIGINT handler is left alone. During
``Agent.compact`` or a summarizing ``Agent.navigate``, the summary is cancelled and nothing is
appended, then the same ``KeyboardInterrupt``."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from signal import SIGINT
from typing import Any

import orjson
import pytest
from support.agents import make_agent

from ctxmodes import ToolContext, ToolResult
from ctxmodes.abort import AbortSignal
from ctxmodes.compaction import CompactionSettings
from ctxmodes.host.options import HostOptions
from ctxmodes.hostapi import NavigationRequest
from ctxmodes.providers import Script, ScriptedProvider
from ctxmodes.providers.base import ModelRequest, StreamEvent
from ctxmodes.sdk import Agent

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)


class CtrlCTool:
    """Presses Ctrl-C (SIGINT to this process), then waits for the run's abort signal."""

    name = "press_ctrl_c"
    label = "Ctrl-C"
    description = "Interrupt the program."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self, patience: float = 10.0, when: threading.Event | None = None) -> None:
        self.patience = patience
        self.when = when

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        if self.when is not None:
            self.when.wait(10.0)
        # To the process, as a terminal sends it (raise_signal would go to this thread only).
        os.kill(os.getpid(), signal.SIGINT)
        if context.signal.wait(self.patience):
            return ToolResult.error("stopped by Ctrl-C")
        return ToolResult.text("nobody stopped me")


def recorded_messages(agent: Agent) -> list[dict[str, Any]]:
    path = agent.session_file
    assert path is not None
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    return [entry["message"] for entry in entries if entry["type"] == "message"]


RESPONSES = [
    {"tool_calls": [{"name": "press_ctrl_c", "arguments": {}}]},
    {"text": "Answered after the tool."},
    {"text": "Back again."},
]


def test_ctrl_c_aborts_the_run_then_raises_keyboard_interrupt(tmp_path):
    with make_agent(tmp_path, RESPONSES, CtrlCTool()) as agent:
        with pytest.raises(KeyboardInterrupt):
            agent.prompt("start")
        assert not agent.is_busy()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        messages = recorded_messages(agent)
        call, result, reply = messages[-3:]
        assert call["content"][0]["type"] == "toolCall"
        assert result["role"] == "toolResult"
        assert result["toolCallId"] == call["content"][0]["id"]
        assert result["content"][0]["text"] == "stopped by Ctrl-C"
        assert reply["stopReason"] == "aborted"
        agent.prompt("carry on")
        assert recorded_messages(agent)[-1]["content"][0]["text"] == "Answered after the tool."


def test_a_programs_own_sigint_handler_is_kept(tmp_path):
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        with make_agent(tmp_path, RESPONSES, CtrlCTool(patience=0.2)) as agent:
            agent.prompt("start")
            result, reply = recorded_messages(agent)[-2:]
    finally:
        signal.signal(signal.SIGINT, previous)
    assert pressed == [signal.SIGINT]
    assert result["content"][0]["text"] == "nobody stopped me"
    assert reply["content"][0]["text"] == "Answered after the tool."


def test_ctrl_c_while_waiting_for_a_submitted_run_then_closing_aborts_it(tmp_path):
    waiting = threading.Event()

    def wait_in_a_block() -> Agent:
        # The tool presses Ctrl-C from the agent's worker thread once this thread waits.
        with make_agent(tmp_path, RESPONSES, CtrlCTool(when=waiting)) as agent:
            agent.submit("start")
            waiting.set()
            agent.wait_for_idle(10.0)
        return agent

    with pytest.raises(KeyboardInterrupt):
        wait_in_a_block()
    (path,) = (tmp_path / "sessions").glob("*.jsonl")
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    call, result, reply = [entry["message"] for entry in entries if entry["type"] == "message"][-3:]
    assert result["toolCallId"] == call["content"][0]["id"]
    assert result["content"][0]["text"] == "stopped by Ctrl-C"
    assert reply["stopReason"] == "aborted"


class CtrlCOnFirstSummary(ScriptedProvider):
    """The scripted model, which presses Ctrl-C during the first summary it is asked for and
    waits for that summary's abort (a ``KeyboardInterrupt`` raised in the middle of the
    summary would not let it see one)."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        super().__init__(Script.model_validate({"responses": responses}), chunk_chars=4)
        self.pressed = False
        self.saw_the_abort = False

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[StreamEvent]:
        if request.purpose != "turn" and not self.pressed:
            self.pressed = True
            os.kill(os.getpid(), SIGINT)
            self.saw_the_abort = signal.wait(10.0)
        return super().stream(request, signal)


def entry_types(agent: Agent) -> list[str]:
    path = agent.session_file
    assert path is not None
    return [orjson.loads(line)["type"] for line in path.read_bytes().splitlines()[1:]]


TWO_ANSWERS = [{"text": "First answer, " * 20}, {"text": "Second answer, " * 20}]
KEEP_LITTLE = HostOptions(compaction=CompactionSettings(keep_recent_tokens=1))


def test_ctrl_c_cancels_a_compaction_then_raises_keyboard_interrupt(tmp_path):
    provider = CtrlCOnFirstSummary(TWO_ANSWERS)
    with make_agent(tmp_path, [], provider=provider, options=KEEP_LITTLE) as agent:
        agent.prompt("first " * 50)
        agent.prompt("second " * 50)
        before = entry_types(agent)
        with pytest.raises(KeyboardInterrupt):
            agent.compact()
        assert provider.saw_the_abort
        assert not agent.is_busy()
        assert signal.getsignal(SIGINT) is signal.default_int_handler
        assert entry_types(agent) == before
        agent.compact()
        assert entry_types(agent) == [*before, "compaction"]


def test_ctrl_c_cancels_a_summarized_move_then_raises_keyboard_interrupt(tmp_path):
    provider = CtrlCOnFirstSummary(TWO_ANSWERS)
    with make_agent(tmp_path, [], provider=provider) as agent:
        agent.prompt("first")
        first_reply = agent.session_manager.get_leaf_id()
        agent.prompt("second")
        leaf, before = agent.session_manager.get_leaf_id(), entry_types(agent)
        assert first_reply is not None
        request = NavigationRequest(target_id=first_reply, summarize=True)
        with pytest.raises(KeyboardInterrupt):
            agent.navigate(request)
        assert provider.saw_the_abort
        assert not agent.is_busy()
        assert (agent.session_manager.get_leaf_id(), entry_types(agent)) == (leaf, before)
        assert not agent.navigate(request).cancelled
        assert entry_types(agent) == [*before, "branch_summary"]
