"""RPC mode with no model to start on: Pi's RPC starts all the same, reporting its
placeholder model and refusing prompts, so a client can still drive the session (and name a
model once it has credentials); ctxmodes does the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli_process import CTXMODES, ctxmodes_environment
from support.pi_print import pi_command
from support.rpc_client import RpcProcess

pytestmark = pytest.mark.pi

COMMANDS: list[dict[str, Any]] = [
    {"type": "get_state"},
    {"type": "prompt", "message": "hello"},
    {"type": "get_available_models"},
    {"type": "cycle_model"},
    {"type": "get_messages"},
]


def _answers(process: RpcProcess) -> tuple[list[dict[str, Any]], str]:
    """The answers to :data:`COMMANDS`, and what the process wrote on standard error."""
    with process:
        answers = [process.request(command) for command in COMMANDS]
        assert process.close() == 0
        return answers, process.stderr()


def test_without_credentials_both_start_and_refuse_only_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "pi").mkdir()
    (tmp_path / "ours").mkdir()
    agent = tmp_path / "pi-agent"
    agent.mkdir()
    (agent / "models.json").write_text('{"providers": {}}')
    pi, pi_environment = pi_command(agent)
    theirs, _ = _answers(RpcProcess([*pi, "--mode", "rpc"], tmp_path / "pi", pi_environment))
    process = RpcProcess(
        [*CTXMODES, "--mode", "rpc"], tmp_path / "ours", ctxmodes_environment(tmp_path)
    )
    ours, warned = _answers(process)
    assert warned.startswith("Warning: no model available: ")
    assert [answer["success"] for answer in ours] == [True, False, True, True, True]
    assert [answer["success"] for answer in theirs] == [answer["success"] for answer in ours]
    state, theirs_state = ours[0]["data"], theirs[0]["data"]
    assert state["model"] == theirs_state["model"]
    assert list(state["model"]) == list(theirs_state["model"])
    assert state["thinkingLevel"] == theirs_state["thinkingLevel"] == "off"
    assert ours[1]["error"].startswith("No model selected")
    assert [answer.get("data") for answer in ours[2:]] == [
        answer.get("data") for answer in theirs[2:]
    ]
