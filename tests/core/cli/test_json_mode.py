"""Pi's JSON mode: ``ctxmodes --mode json PROMPT`` prints the session header, then every
session event as one JSON line, as ``pi --mode json`` does. The real Pi, against the same
loopback model, is the judge: the same events in the same order, with the same payloads
once what legitimately differs is normalised
(see :func:`~support.pi_events.normalised_events`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_process import run_cli
from support.pi_events import normalised_events
from support.pi_print import API, run_ours, run_pi
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

from ctxmodes.cli.pi_command_line import meant_command_line

pytestmark = pytest.mark.slow  # each test runs ctxmodes (and Pi) as processes, end to end

COMMANDS = frozenset({"run", "chat", "session"})
#: A refusal Pi does not retry (``server_error`` would be): one request, one failed answer.
BAD_REQUEST = b'{"error":{"message":"bad request","type":"invalid_request_error"}}'


@pytest.mark.parametrize(
    ("argv", "terminal", "meant"),
    [
        (["--mode", "json", "hi"], True, ["run", "--json", "hi"]),
        (["--mode=json", "-p", "hi"], True, ["run", "--json", "hi"]),
        (
            ["--mode", "json", "--model", "x/y", "@f"],
            True,
            ["run", "--json", "--model", "x/y", "@f"],
        ),
        (["--mode", "text", "-p", "hi"], True, ["run", "--print", "hi"]),
        (["--mode", "rpc", "--model", "x/y"], True, ["run", "--rpc", "--model", "x/y"]),
        (["--mode=rpc", "-n", "x"], False, ["run", "--rpc", "-n", "x"]),
        # Pi's default output: the line means what it means without it.
        (["--mode", "text", "hi"], True, ["chat", "hi"]),
        (["--mode", "text", "hi"], False, ["run", "--print", "hi"]),
        # Any other value is the context mode, as before.
        (["--mode", "tree", "-p", "hi"], True, ["run", "--print", "--mode", "tree", "hi"]),
        # Only the bare line: after a command, --mode is the context mode.
        (["run", "--mode", "json", "hi"], True, None),
        (["-p", "--", "--mode", "json"], True, ["run", "--print", "--", "--mode", "json"]),
    ],
)
def test_pi_output_modes_on_the_bare_command_line(
    argv: list[str], terminal: bool, meant: list[str] | None
) -> None:
    assert meant_command_line(argv, is_command=COMMANDS.__contains__, terminal=terminal) == meant


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (["--mode", "rpc", "hi"], "RPC mode takes its prompts from standard input, as commands"),
        # Pi's own words.
        (["--mode", "rpc", "@notes.txt"], "@file arguments are not supported in RPC mode"),
        (["run", "--rpc", "--print"], "--rpc is an output mode of its own: leave out --print"),
    ],
)
def test_pi_rpc_mode_refuses_prompts_on_its_command_line(
    tmp_path: Path, argv: list[str], refusal: str
) -> None:
    result = run_ours(tmp_path, "http://127.0.0.1:9", argv)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines()[0].startswith(f"ctxmodes: error: {refusal}")


def test_stdout_carries_only_json_lines_and_warnings_go_to_stderr(tmp_path: Path) -> None:
    missing = tmp_path / "absent-skill"
    result = run_cli(
        tmp_path, {"responses": [{"text": "hi"}]}, "--json", "--skill", str(missing), "hello"
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [event["type"] for event in events][:2] == ["session", "agent_start"]
    assert events[-1]["type"] == "agent_settled"
    assert "Warning:" in result.stderr


def _cases(tmp_path: Path) -> dict[str, list[Reply]]:
    return {
        "text": [Reply(text_stream(API, "Hello there"))],
        "tool": [
            Reply(tool_call_stream(API, "read", json.dumps({"path": "note.txt"}))),
            Reply(text_stream(API, "It says hello.")),
        ],
        "error": [Reply([BAD_REQUEST], status=400)],
    }


@pytest.mark.pi
@pytest.mark.parametrize("case", ["text", "tool", "error"])
def test_the_event_stream_is_pis(tmp_path: Path, case: str) -> None:
    (tmp_path / "note.txt").write_text("hello note\n")
    argv = ["--mode", "json", "--model", "loop/m", "What does note.txt say?"]
    with WireServer(_cases(tmp_path)[case]) as server:
        theirs = run_pi(tmp_path, server.base_url, argv)
    with WireServer(_cases(tmp_path)[case]) as server:
        ours = run_ours(tmp_path, server.base_url, argv)
    # As Pi: a model error is an event of the stream, the command still succeeds.
    assert (ours.returncode, theirs.returncode) == (0, 0), ours.stderr + theirs.stderr
    pi_events = [json.loads(line) for line in theirs.stdout.splitlines()]
    our_events = [json.loads(line) for line in ours.stdout.splitlines()]
    expected, got = normalised_events(pi_events), normalised_events(our_events)
    assert [event["type"] for event in got] == [event["type"] for event in expected]
    # The same events, each with its keys in Pi's order (an answer's as its transport
    # added them).
    for ours_one, theirs_one in zip(got, expected, strict=True):
        assert json.dumps(ours_one) == json.dumps(theirs_one)
    if case == "tool":
        ended = [event for event in got if event["type"] == "tool_execution_end"]
        assert ended[0]["result"]["content"] == [{"type": "text", "text": "hello note\n"}]
