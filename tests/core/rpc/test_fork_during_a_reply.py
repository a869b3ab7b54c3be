"""A fork or clone asked for while the model is still answering, as the real Pi makes it:
``ctxmodes --mode rpc`` and ``pi --mode rpc`` get the same commands on the same loopback
model, and write the same entries in the same order. The new file holds what the session
file held before the run was aborted; the aborted reply is then appended to the file left
behind, which is only ever appended to. The terminal's ``/fork`` and ``/clone`` take the
same path (:mod:`tests.core.tui.test_fork_while_working`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

JsonObject = dict[str, Any]
#: ctxmodes records the context-management mode in an entry of its own; Pi has none.
MODE_RECORD = "ctxmodes-mode"
SLOW_REPLY = "an answer that is still being written when the fork comes"


def _shape(entry: JsonObject) -> tuple[Any, ...]:
    """An entry without what is new in each run (ids, times) or depends on how much of the
    held reply had arrived: its type, role, stop reason, and text unless aborted."""
    message = entry.get("message", {})
    content = message.get("content") or [{}]
    text = None if message.get("stopReason") == "aborted" else content[0].get("text")
    return (entry["type"], message.get("role"), message.get("stopReason"), text)


def _shapes(path: Path) -> list[tuple[Any, ...]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [_shape(entry) for entry in lines if entry.get("customType") != MODE_RECORD]


def _session_file(process: RpcProcess) -> Path:
    return Path(process.request({"type": "get_state"})["data"]["sessionFile"])


def _during_the_second_reply(tmp_path: Path, command: str) -> dict[str, dict[str, Any]]:
    """For Pi, then ctxmodes: one exchange, a second prompt whose reply is held half sent,
    then ``command`` (``fork`` before the second prompt, or ``clone``)."""
    found: dict[str, dict[str, Any]] = {}
    for start, name in ((pi_rpc, "pi"), (our_rpc, "ours")):
        where = tmp_path / name
        where.mkdir()
        slow = Reply(text_stream(API, SLOW_REPLY), behaviour="pause", cut_after=2)
        with (
            WireServer([Reply(text_stream(API, "first answer")), slow]) as server,
            start(where, server.base_url) as process,
        ):
            process.send({"type": "prompt", "message": "q1"})
            process.wait_for_event("agent_settled")
            process.send({"type": "prompt", "message": "q2"})
            process.wait_for_event("message_update")
            original = _session_file(process)
            before = original.read_bytes()
            request: JsonObject = {"type": command}
            if command == "fork":
                messages = process.request({"type": "get_fork_messages"})["data"]["messages"]
                request["entryId"] = messages[-1]["entryId"]
            answer = process.request(request)
            made = _session_file(process)
            found[name] = {
                "answer": {key: answer[key] for key in ("command", "success", "data")},
                "original": _shapes(original),
                "appended only": original.read_bytes().startswith(before),
                "made": _shapes(made),
                "parent": json.loads(made.read_text().splitlines()[0]).get("parentSession"),
                "original path": str(original),
            }
            assert process.close() == 0, process.stderr()
    return found


FIRST_EXCHANGE = [
    ("message", "user", None, "q1"),
    ("message", "assistant", "stop", "first answer"),
]
ABORTED_TURN = [
    ("message", "user", None, "q2"),
    ("message", "assistant", "aborted", None),
]


@pytest.mark.pi
@pytest.mark.parametrize(
    ("command", "copied"),
    [("fork", FIRST_EXCHANGE), ("clone", [*FIRST_EXCHANGE, ABORTED_TURN[0]])],
)
def test_a_fork_or_clone_during_a_reply_writes_pis_entries_in_pis_order(
    tmp_path: Path, command: str, copied: list[tuple[Any, ...]]
) -> None:
    found = _during_the_second_reply(tmp_path, command)
    pi, ours = found["pi"], found["ours"]
    assert ours["answer"] == pi["answer"]
    assert pi["answer"]["success"] is True
    for program in (pi, ours):
        assert program["parent"] == program["original path"]
        assert program["appended only"] is True
    # The model and level records open both files, as each program writes them.
    assert ours["original"] == pi["original"]
    assert pi["original"][-4:] == [*FIRST_EXCHANGE, *ABORTED_TURN]
    assert ours["made"] == pi["made"]
    assert pi["made"][-len(copied) :] == copied
