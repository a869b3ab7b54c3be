"""What the commands of a session see of it, against the real Pi: the model's ``bash`` tool
gets the session's ``PI_*`` variables as they are when each command starts (after a model
and level switch, the new ones), never the stale values the agent inherited; the user's own
command (RPC ``bash``, Pi's ``!``) inherits the agent's environment as it is; and every
child process carries the agent's process markers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API, pi_agent_dir, pi_cli, run_ours
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

from ctxmodes import SESSION_ENVIRONMENT_NAMES

JsonObject = dict[str, Any]
MARKERS = ("AI_AGENT", "PI_CODING_AGENT")
NAMES = (*SESSION_ENVIRONMENT_NAMES, *MARKERS)
#: One line per variable: NAME=value, or NAME alone when it is unset.
PRINT_VARIABLES = (
    "for name in " + " ".join(NAMES) + "; do "
    'if [ "${!name+set}" ]; then printf "%s=%s\\n" "$name" "${!name}"; '
    'else printf "%s\\n" "$name"; fi; done'
)
#: What the agent inherits from an outer agent: none of it may reach the model's commands.
INHERITED = {name: f"outer {name}" for name in NAMES}
#: A second loopback model, one that reasons.
REASONING = {"id": "r", "reasoning": True}

Variables = dict[str, str | None]


def _variables(text: str) -> Variables:
    pairs = (line.partition("=") for line in text.splitlines())
    return {name: value if equals else None for name, equals, value in pairs}


def _bash_call_then_text() -> list[Reply]:
    return [
        Reply(tool_call_stream(API, "bash", json.dumps({"command": PRINT_VARIABLES}))),
        Reply(text_stream(API, "Noted.")),
    ]


def _tool_outputs(lines: list[JsonObject]) -> list[Variables]:
    ended = [line for line in lines if line["type"] == "tool_execution_end"]
    return [_variables(line["result"]["content"][0]["text"]) for line in ended]


def _session(process: RpcProcess) -> tuple[Variables, Variables, JsonObject]:
    """Two model turns around a model and level switch, then the user's command: what the
    two tool calls and the user's command printed, and the session's state."""
    process.request({"type": "prompt", "message": "Which model are you?"})
    process.wait_for_event("agent_settled")
    assert process.request({"type": "set_model", "provider": "loop", "modelId": "r"})["success"]
    assert process.request({"type": "set_thinking_level", "level": "low"})["success"]
    process.request({"type": "prompt", "message": "And now?"})
    process.wait_for_event("agent_settled")
    user = process.request({"type": "bash", "command": PRINT_VARIABLES})
    state = process.request({"type": "get_state"})["data"]
    return user["data"]["output"], state


def _model_part(printed: Variables) -> Variables:
    return {name: printed[name] for name in ("PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")}


def _header_id(session_file: str) -> str:
    with open(session_file, encoding="utf-8") as lines:
        header = json.loads(lines.readline())
    assert header["type"] == "session"
    return str(header["id"])


@pytest.mark.pi
@pytest.mark.parametrize("argv", [[], ["--no-session"]], ids=["saved", "in-memory"])
def test_the_model_and_the_user_see_what_they_see_in_pi(tmp_path: Path, argv: list[str]) -> None:
    runs = {}
    for start, name in ((pi_rpc, "pi"), (our_rpc, "ours")):
        where = tmp_path / name
        where.mkdir()
        replies = _bash_call_then_text() + _bash_call_then_text()
        with (
            WireServer(replies) as server,
            start(where, server.base_url, argv, env=INHERITED, more_models=[REASONING]) as process,
        ):
            user_output, state = _session(process)
            assert process.close() == 0, process.stderr()
        tool_outputs = _tool_outputs(process.lines)
        assert len(tool_outputs) == 2
        runs[name] = (tool_outputs, _variables(user_output), state)
    (pi_tools, pi_user, pi_state), (tools, user, state) = runs["pi"], runs["ours"]

    for outputs, own_state in ((tools, state), (pi_tools, pi_state)):
        for printed in outputs:
            # Each one's own session: the id, and the file that holds it (none in memory).
            assert printed["PI_SESSION_ID"] == own_state["sessionId"]
            session_file = printed["PI_SESSION_FILE"]
            assert session_file == own_state.get("sessionFile")
            if session_file is not None:
                assert os.path.isabs(session_file)
                assert _header_id(session_file) == printed["PI_SESSION_ID"]
    model_of = [[_model_part(printed) for printed in outputs] for outputs in (tools, pi_tools)]
    assert model_of[0] == model_of[1]
    # The second command saw the switch.
    assert model_of[1][0] != model_of[1][1]
    assert (argv == []) == (pi_tools[0]["PI_SESSION_FILE"] is not None)

    # The process markers: the generic one names the agent, Pi's says it is Pi-compatible.
    for printed in [*tools, user]:
        assert printed["AI_AGENT"] == "ctxmodes"
        assert printed["PI_CODING_AGENT"] == pi_tools[0]["PI_CODING_AGENT"]
    assert {printed["AI_AGENT"] for printed in [*pi_tools, pi_user]} == {"pi"}
    # The user's command inherits the agent's environment as it is, inherited values too.
    assert {name: user[name] for name in SESSION_ENVIRONMENT_NAMES} == {
        name: pi_user[name] for name in SESSION_ENVIRONMENT_NAMES
    }
    assert user["PI_MODEL"] == INHERITED["PI_MODEL"]


@pytest.mark.pi
@pytest.mark.parametrize("mode", [["-p"], ["--mode", "json"]], ids=["print", "json"])
def test_print_and_json_modes_give_them_as_pi_does(tmp_path: Path, mode: list[str]) -> None:
    argv = [*mode, "--model", "loop/m", "Which model are you?"]
    printed = {}
    for name in ("pi", "ours"):
        where = tmp_path / name
        where.mkdir()
        with WireServer(_bash_call_then_text()) as server:
            if name == "pi":
                agent = pi_agent_dir(where, server.base_url)
                result = pi_cli(where, agent, argv, env=INHERITED)
            else:
                result = run_ours(where, server.base_url, argv, env=INHERITED)
            assert result.returncode == 0, result.stderr
            body = json.loads(server.requests[1]["body"])
        (output,) = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not isinstance(output, str):
            output = "".join(part["text"] for part in output)
        (session_file,) = where.rglob("*.jsonl")
        printed[name] = (_variables(output), session_file)
    (pi_printed, pi_file), (ours, our_file) = printed["pi"], printed["ours"]
    for variables, session_file in ((ours, our_file), (pi_printed, pi_file)):
        assert variables["PI_SESSION_FILE"] == str(session_file)
        assert variables["PI_SESSION_ID"] == _header_id(str(session_file))
    for name in ("PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL", "PI_CODING_AGENT"):
        assert ours[name] == pi_printed[name]
    assert (ours["AI_AGENT"], pi_printed["AI_AGENT"]) == ("ctxmodes", "pi")


@pytest.mark.pi
def test_a_new_session_is_the_one_the_next_command_sees_as_in_pi(tmp_path: Path) -> None:
    seen = {}
    for start, name in ((pi_rpc, "pi"), (our_rpc, "ours")):
        where = tmp_path / name
        where.mkdir()
        ids = []
        replies = _bash_call_then_text() + _bash_call_then_text()
        with WireServer(replies) as server, start(where, server.base_url) as process:
            for message in ("Before", "After"):
                if ids:
                    assert process.request({"type": "new_session"})["success"]
                process.request({"type": "prompt", "message": message})
                process.wait_for_event("agent_settled")
                ids.append(process.request({"type": "get_state"})["data"]["sessionId"])
            assert process.close() == 0, process.stderr()
        printed = [output["PI_SESSION_ID"] for output in _tool_outputs(process.lines)]
        seen[name] = (printed, ids)
    for printed, ids in seen.values():
        assert printed == ids
        assert ids[0] != ids[1]
