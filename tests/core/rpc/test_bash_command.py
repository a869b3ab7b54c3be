"""Pi's RPC ``bash`` and ``abort_bash``: ``ctxmodes --mode rpc`` and the real ``pi --mode
rpc`` run the same shell commands in the same kind of folder, and answer, stream and record
them alike."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API
from support.rpc_client import RpcProcess, bash_messages, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

JsonObject = dict[str, Any]
Script = Callable[[RpcProcess, WireServer], Any]


def _both(
    tmp_path: Path, script: Script, replies: list[Reply] | None = None
) -> list[tuple[Any, RpcProcess]]:
    """What ``script`` returned for Pi, then for ctxmodes, each process once it ended."""
    done = []
    for start, where in ((pi_rpc, tmp_path / "pi"), (our_rpc, tmp_path / "ours")):
        where.mkdir()
        (where / "note.txt").write_text("hello note\n")
        answers = list(replies or [])
        with WireServer(answers) as server, start(where, server.base_url) as process:
            returned = script(process, server)
            assert process.close() == 0
            done.append((returned, process))
    return done


def _deltas(process: RpcProcess, request_id: str) -> list[JsonObject]:
    return [
        line
        for line in process.lines
        if line["type"] == "bash_execution_update" and line.get("id") == request_id
    ]


def _run_three(process: RpcProcess, server: WireServer) -> list[JsonObject]:
    # A prompt first: Pi writes its session file once an answer came.
    process.request({"type": "prompt", "message": "Hello"})
    process.wait_for_event("agent_settled")
    commands = [
        {"command": "printf 'one\\r\\n\\033[1mtwo\\033[0m\\n'; cat note.txt; echo err >&2; exit 4"},
        {"command": "echo hidden", "excludeFromContext": True},
        {"command": "echo shown", "excludeFromContext": False},
    ]
    return [process.request({"type": "bash", **command}) for command in commands]


@pytest.mark.pi
def test_commands_answer_stream_and_are_recorded_as_pis(tmp_path: Path) -> None:
    (theirs, _), (ours, mine) = _both(tmp_path, _run_three, [Reply(text_stream(API, "Fine."))])
    assert ours == theirs
    assert theirs[0]["data"] == {
        "output": "one\ntwo\nhello note\nerr\n",
        "exitCode": 4,
        "cancelled": False,
        "truncated": False,
    }
    for response in ours:
        deltas = _deltas(mine, response["id"])
        assert [sorted(delta) for delta in deltas] == [["delta", "id", "type"]] * len(deltas)
        assert "".join(delta["delta"] for delta in deltas) == response["data"]["output"]
        at = mine.lines.index(response)
        assert all(mine.lines.index(delta) < at for delta in deltas)
    assert bash_messages(tmp_path / "ours") == bash_messages(tmp_path / "pi")
    assert [m.get("excludeFromContext") for m in bash_messages(tmp_path / "ours")] == [
        None,
        True,
        False,
    ]


def _abort_running(process: RpcProcess, server: WireServer) -> tuple[JsonObject, JsonObject]:
    process.send({"id": "slow", "type": "bash", "command": "echo started; sleep 30; echo late"})
    process.wait_for(lambda line: line.get("type") == "bash_execution_update")
    aborted = process.request({"type": "abort_bash"})
    return aborted, process.wait_for(lambda line: line.get("id") == "slow")


@pytest.mark.pi
def test_abort_bash_stops_the_command_which_answers_cancelled(tmp_path: Path) -> None:
    (theirs, _), (ours, _) = _both(tmp_path, _abort_running)
    assert ours == theirs
    assert theirs[1]["data"] == {"output": "started\n", "cancelled": True, "truncated": False}


FULL_OUTPUT = "".join(f"{n}\n" for n in range(1, 3001))


def _long_output(process: RpcProcess, server: WireServer) -> JsonObject:
    answer = process.request({"type": "bash", "command": "seq 1 3000"})
    # Pi answers before its file stream has even opened the file, and does not flush the
    # stream when it exits: the file is waited for.
    full = Path(answer["data"]["fullOutputPath"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if full.exists() and full.stat().st_size >= len(FULL_OUTPUT):
            break
        time.sleep(0.05)
    return answer


@pytest.mark.pi
def test_a_long_output_is_cut_as_pi_cuts_it_and_kept_whole_in_a_file(tmp_path: Path) -> None:
    (theirs, _), (ours, _) = _both(tmp_path, _long_output)
    # Each program names its own temporary file; both hold the whole output.
    for answer in (theirs, ours):
        full = Path(answer["data"].pop("fullOutputPath"))
        assert full.read_text() == FULL_OUTPUT
        full.unlink()
    assert ours == theirs
    assert theirs["data"]["truncated"] is True


def _during_an_answer(process: RpcProcess, server: WireServer) -> JsonObject:
    process.send({"id": "p1", "type": "prompt", "message": "Hello"})
    process.wait_for(lambda line: line.get("type") == "message_update")
    answered = process.request({"type": "bash", "command": "echo meanwhile"})
    server.release.set()
    process.wait_for_event("agent_settled")
    return answered


@pytest.mark.pi
def test_a_command_run_during_an_answer_is_recorded_after_it(tmp_path: Path) -> None:
    # The model keeps answering until released: the command answers at once, and its
    # message joins the session once the run is over, as in Pi.
    answer = Reply(text_stream(API, "Still answering."), behaviour="pause", cut_after=1)
    (theirs, pi), (ours, mine) = _both(tmp_path, _during_an_answer, [answer])
    assert ours == theirs
    for process, where in ((pi, tmp_path / "pi"), (mine, tmp_path / "ours")):
        (session,) = where.rglob("*.jsonl")
        entries = [json.loads(line) for line in session.read_text().splitlines()]
        roles = [e["message"]["role"] for e in entries if e["type"] == "message"]
        assert roles == ["user", "assistant", "bashExecution"], where
        at = process.lines.index
        settled = next(line for line in process.lines if line["type"] == "agent_settled")
        assert at(ours if process is mine else theirs) < at(settled)
    assert bash_messages(tmp_path / "ours") == bash_messages(tmp_path / "pi")


def test_bad_input_is_answered_with_an_error(tmp_path: Path) -> None:
    # Pi runs the text "undefined" for a missing command; ctxmodes says what is wrong.
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        answers = [
            process.request({"type": "bash"}),
            process.request({"type": "bash", "command": ["ls"]}),
            process.request({"type": "bash", "command": "ls", "excludeFromContext": "yes"}),
        ]
        assert process.close() == 0
    assert [(a["success"], a["error"]) for a in answers] == [
        (False, 'bash needs a string "command"'),
        (False, 'bash needs a string "command"'),
        (False, '"excludeFromContext" must be true or false'),
    ]
    assert not any(line["type"] == "bash_execution_update" for line in process.lines)


def test_the_end_of_input_stops_a_running_command(tmp_path: Path) -> None:
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        process.send({"id": "slow", "type": "bash", "command": "echo up; sleep 60"})
        process.wait_for(lambda line: line.get("type") == "bash_execution_update")
        started = time.monotonic()
        assert process.close() == 0
    assert time.monotonic() - started < 20
    (answer,) = [line for line in process.lines if line["type"] == "response"]
    assert answer["data"] == {"output": "up\n", "cancelled": True, "truncated": False}
