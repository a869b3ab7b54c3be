"""Ctrl-C during ``Agent.prompt``: the run is aborted and recorded as an abort, then the
program gets its ``KeyboardInterrupt``; a program's own SIGINT handler is left alone."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import orjson
import pytest
from support.agents import make_agent

from ctxmodes import ToolContext, ToolResult
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
