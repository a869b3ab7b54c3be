"""Pi's RPC mode, prompting: ``ctxmodes --mode rpc`` and the real ``pi --mode rpc`` get the
same commands against the same loopback model, and write the same lines (events compared
as in JSON mode, see :func:`~support.pi_events.normalised_events`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_events import normalised_events
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

JsonObject = dict[str, Any]


def _both(
    tmp_path: Path, replies: list[Reply], script: Any
) -> tuple[list[JsonObject], list[JsonObject]]:
    """What Pi, then ctxmodes, wrote while ``script(process, server)`` drove each."""
    written = []
    for start, where in ((pi_rpc, tmp_path / "pi"), (our_rpc, tmp_path / "ours")):
        where.mkdir()
        (where / "note.txt").write_text("hello note\n")
        with WireServer(list(replies)) as server, start(where, server.base_url) as process:
            script(process, server)
            assert process.close() == 0
            written.append(process.lines)
    return written[0], written[1]


def _settled_prompt(process: RpcProcess, server: WireServer) -> None:
    process.send({"id": "p1", "type": "prompt", "message": "What does note.txt say?"})
    process.wait_for_event("agent_settled")


@pytest.mark.parametrize("case", ["text", "tool"])
def test_a_prompt_answers_then_streams_pis_events(tmp_path: Path, case: str) -> None:
    replies = {
        "text": [Reply(text_stream(API, "Hello there"))],
        "tool": [
            Reply(tool_call_stream(API, "read", json.dumps({"path": "note.txt"}))),
            Reply(text_stream(API, "It says hello.")),
        ],
    }[case]
    theirs, ours = _both(tmp_path, replies, _settled_prompt)
    assert (
        ours[0]
        == theirs[0]
        == {
            "id": "p1",
            "type": "response",
            "command": "prompt",
            "success": True,
        }
    )
    expected, got = normalised_events(theirs[1:]), normalised_events(ours[1:])
    assert [line["type"] for line in got] == [line["type"] for line in expected]
    for one, other in zip(got, expected, strict=True):
        assert one == other
