"""Pi's JSON mode: ``ctxmodes --mode json PROMPT`` prints the session header, then every
session event as one JSON line, as ``pi --mode json`` does. The real Pi, against the same
loopback model, is the judge: the same events in the same order, with the same payloads
once what legitimately differs is normalised (see :func:`_normalised`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import run_cli
from support.pi_print import API, run_ours, run_pi
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

from ctxmodes.cli.pi_command_line import meant_command_line
from ctxmodes.errors import CtxmodesError

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


def test_pi_rpc_mode_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(CtxmodesError, match="RPC mode"):
        meant_command_line(["--mode", "rpc"], is_command=COMMANDS.__contains__, terminal=True)
    result = run_ours(tmp_path, "http://127.0.0.1:9", ["--mode", "rpc", "hi"])
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "ctxmodes: error: Pi's RPC mode (--mode rpc) is not supported by ctxmodes"
    ]


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
    expected, got = _normalised(pi_events), _normalised(our_events)
    assert [event["type"] for event in got] == [event["type"] for event in expected]
    for ours_one, theirs_one in zip(got, expected, strict=True):
        assert ours_one == theirs_one
    if case == "tool":
        ended = [event for event in got if event["type"] == "tool_execution_end"]
        assert ended[0]["result"]["content"] == [{"type": "text", "text": "hello note\n"}]


def _normalised(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with what legitimately differs between two runs or two programs made
    equal, and nothing else:

    - the header's ``id`` and ``timestamp``, and every message's ``timestamp``: a new
      session and the wall clock (the ``cwd`` is the same directory and stays);
    - an answer's ``message_start`` snapshot (``stopReason`` ``pending``): Pi serialises its
      live partial message once its transport may already have filled in content and the
      response id, so its ``content`` and ``responseId`` are a race;
    - the ``usage`` of each ``message_update`` but a message's last: Pi's is the live
      partial's, a race with the chunk reporting usage; the last one (after the stream
      ended) is the final usage in both;
    - a tool call's ``toolcall_delta`` updates, joined into one with the parsed arguments:
      Pi streams the arguments' JSON as the chunks come, ctxmodes' transports hand over a
      tool call whole (its arguments, already parsed, in one delta).
    """
    result: list[dict[str, Any]] = []
    for event in events:
        event = _without_timestamps(event)
        if event["type"] == "session":
            event = {**event, "id": "<id>", "timestamp": "<timestamp>"}
        if event["type"] == "message_start" and event["message"].get("stopReason") == "pending":
            partial = {**event["message"], "content": []}
            partial.pop("responseId", None)
            event = {**event, "message": partial}
        if event["type"] == "message_update":
            update = event["assistantMessageEvent"]
            before = result[-1] if result else None
            if update["type"] == "toolcall_delta":
                if (
                    before is not None
                    and before["assistantMessageEvent"]["type"] == "toolcall_delta"
                ):
                    result.pop()
                    update = {
                        **update,
                        "delta": before["assistantMessageEvent"]["delta"] + update["delta"],
                    }
                event = {**event, "assistantMessageEvent": update}
            if before is not None and before["type"] == "message_update":
                before["usage"] = "<live usage>"
        result.append(event)
    for event in result:
        update = event.get("assistantMessageEvent", {})
        if update.get("type") == "toolcall_delta":
            update["delta"] = json.loads(update["delta"])
    return result


def _without_timestamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: "<timestamp>" if key == "timestamp" else _without_timestamps(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without_timestamps(item) for item in value]
    return value
