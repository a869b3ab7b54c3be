"""Pi's RPC mode, prompting: ``ctxmodes --mode rpc`` and the real ``pi --mode rpc`` get the
same commands against the same loopback model, and write the same lines (events compared
as in JSON mode, see :func:`~support.pi_events.normalised_events`)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from support.images import solid_png
from support.pi_events import normalised_events
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

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


@pytest.mark.pi
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


def _responses(lines: list[JsonObject]) -> list[JsonObject]:
    return [line for line in lines if line["type"] == "response"]


def _while_answering(process: RpcProcess, server: WireServer) -> None:
    """Commands sent while the model is still answering the first prompt."""
    process.request({"type": "prompt", "message": "first"})
    assert server.arrived.wait(30)
    process.request({"type": "prompt", "message": "no behaviour"})
    process.request({"type": "prompt", "message": "steered", "streamingBehavior": "steer"})
    process.request({"type": "prompt", "message": "later", "streamingBehavior": "followUp"})
    process.request({"type": "steer", "message": "steered again"})
    process.request({"type": "follow_up", "message": "later again"})
    process.request({"type": "clear_queue"})
    process.request({"type": "follow_up", "message": "kept"})
    server.release.set()
    process.wait_for(lambda line: line.get("type") == "agent_end" and "kept" in json.dumps(line))
    process.wait_for_event("agent_settled")


@pytest.mark.pi
def test_while_the_agent_works_prompts_need_a_behaviour_and_queue(tmp_path: Path) -> None:
    replies = [
        Reply(text_stream(API, "Answer one"), behaviour="pause", cut_after=1),
        Reply(text_stream(API, "Answer two")),
    ]
    theirs, ours = _both(tmp_path, replies, _while_answering)
    assert _responses(ours) == _responses(theirs)
    refused = _responses(ours)[1]
    assert refused["success"] is False
    assert "streamingBehavior" in refused["error"]
    assert _responses(ours)[6]["data"] == {
        "steering": ["steered", "steered again"],
        "followUp": ["later", "later again"],
    }
    queues = [line for line in ours if line["type"] == "queue_update"]
    assert queues == [line for line in theirs if line["type"] == "queue_update"]
    # The follow-up kept is the only one the model then gets.
    users = [
        line["message"]["content"][0]["text"]
        for line in ours
        if line["type"] == "message_end" and line["message"]["role"] == "user"
    ]
    assert users == ["first", "kept"]


def _aborted(process: RpcProcess, server: WireServer) -> None:
    process.request({"type": "prompt", "message": "first"})
    assert server.arrived.wait(30)
    # Answered once the session settled: nothing to wait for after it.
    process.request({"type": "abort"})


@pytest.mark.pi
def test_abort_answers_once_the_run_stopped(tmp_path: Path) -> None:
    replies = [Reply(text_stream(API, "Answer one"), behaviour="hold", cut_after=1)]
    theirs, ours = _both(tmp_path, replies, _aborted)
    assert _responses(ours) == _responses(theirs)
    kinds = [line["type"] for line in ours]
    assert kinds[-2:] == ["agent_settled", "response"]
    assert [k for k in kinds if k != "message_update"] == [
        line["type"] for line in theirs if line["type"] != "message_update"
    ]
    ended = next(line for line in ours if line["type"] == "agent_end")
    assert ended["messages"][-1]["stopReason"] == "aborted"


def _bad_lines(process: RpcProcess, server: WireServer) -> None:
    for raw in [
        b"not json\n",
        b'{"type": "no_such_command", "id": 7}\n',
        b'{"id": "x"}\n',
        b"[1, 2]\r\n",
        b'{"type": "prompt", "id": "p", "message": "caf\xc3\xa9 \xe2\x80\xa8 line"}\n',
    ]:
        process.send_raw(raw)
    process.wait_for_event("agent_settled")


@pytest.mark.pi
def test_bad_lines_get_pis_error_responses_and_the_loop_goes_on(tmp_path: Path) -> None:
    theirs, ours = _both(tmp_path, [Reply(text_stream(API, "ok"))], _bad_lines)
    got, expected = _responses(ours), _responses(theirs)
    # The parse error's detail is the JSON parser's own words.
    for response in (got[0], expected[0]):
        assert response["error"].startswith("Failed to parse command: ")
        response["error"] = "<parser message>"
    assert got[:3] == expected[:3]
    assert (
        got[-1]
        == expected[-1]
        == {
            "id": "p",
            "type": "response",
            "command": "prompt",
            "success": True,
        }
    )
    # U+2028 inside a string is part of the record, not a line break.
    user = next(line for line in ours if line["type"] == "message_end")
    assert user["message"]["content"][0]["text"] == "café \u2028 line"


def _with_an_image(process: RpcProcess, server: WireServer) -> None:
    image = {
        "type": "image",
        "data": base64.b64encode(solid_png(2, 2, (200, 10, 10))).decode(),
        "mimeType": "image/png",
    }
    process.request({"type": "prompt", "message": "What colour?", "images": [image]})
    process.wait_for_event("agent_settled")


@pytest.mark.pi
def test_a_prompt_s_images_follow_its_text_as_in_pi(tmp_path: Path) -> None:
    theirs, ours = _both(tmp_path, [Reply(text_stream(API, "Red"))], _with_an_image)

    def user(lines: list[JsonObject]) -> JsonObject:
        message = next(line for line in lines if line["type"] == "message_end")["message"]
        return {**message, "timestamp": "<timestamp>"}

    assert user(ours) == user(theirs)
    assert [block["type"] for block in user(ours)["content"]] == ["text", "image"]


def test_bad_images_are_refused_and_nothing_is_sent(tmp_path: Path) -> None:
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        for images in ["a.png", [{"type": "image", "data": 3}], [None]]:
            refused = process.request({"type": "prompt", "message": "x", "images": images})
            assert refused["success"] is False
            assert "image" in refused["error"]
        missing = process.request({"type": "prompt"})
        assert missing == {
            "id": missing["id"],
            "type": "response",
            "command": "prompt",
            "success": False,
            "error": 'prompt needs a string "message"',
        }
        assert process.close() == 0
        assert server.requests == []


@pytest.mark.pi
def test_a_new_session_names_its_parent_as_pi_writes_it(tmp_path: Path) -> None:
    parent = tmp_path / "parent.jsonl"

    def start_anew(process: RpcProcess, server: WireServer) -> None:
        answer = process.request({"type": "new_session", "parentSession": str(parent)})
        assert answer["data"] == {"cancelled": False}
        process.request({"type": "prompt", "message": "hello"})
        process.wait_for_event("agent_settled")

    _both(tmp_path, [Reply(text_stream(API, "Hi"))] * 2, start_anew)
    headers = []
    for agent in (tmp_path / "pi" / "pi-agent", tmp_path / "ours" / "agent"):
        (written,) = sorted(agent.glob("sessions/*/*.jsonl"))
        headers.append(json.loads(written.read_text().splitlines()[0]))
    assert headers[0]["parentSession"] == headers[1]["parentSession"] == str(parent)
    assert list(headers[0]) == list(headers[1])


@pytest.mark.pi
def test_a_plugin_s_confirmation_is_pis_dialog(tmp_path: Path) -> None:
    """ctxmodes' ``/mode`` asks before switching; the dialog travels as Pi's ``confirm``
    request (the shape a Pi extension's ``ctx.ui.confirm`` makes, compared key for key)."""
    extension = tmp_path / "ask.js"
    extension.write_text(
        "export default function (pi) {\n"
        '  pi.registerCommand("ask", { handler: async (args, ctx) => {\n'
        '    await ctx.ui.confirm("Switch?", "Really switch");\n'
        "  } });\n"
        "}\n"
    )
    (tmp_path / "pi").mkdir()
    with (
        WireServer([]) as server,
        pi_rpc(tmp_path / "pi", server.base_url, ["-e", str(extension)]) as pi,
    ):
        pi.send({"type": "prompt", "message": "/ask"})
        theirs = pi.wait_for_event("extension_ui_request")
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        process.request({"type": "prompt", "message": "/mode tree"})
        asked = process.wait_for_event("extension_ui_request")
        assert list(asked) == list(theirs)
        assert (asked["method"], asked["title"]) == ("confirm", "Switch the context mode?")
        assert "from off to tree" in asked["message"]
        process.send({"type": "extension_ui_response", "id": "another", "confirmed": True})
        process.send({"type": "extension_ui_response", "id": asked["id"], "confirmed": True})
        told = process.wait_for_event("extension_ui_request")
        assert (told["method"], told["message"], told["notifyType"]) == (
            "notify",
            "Mode: tree",
            "info",
        )
        process.request({"type": "prompt", "message": "/mode off"})
        asked = process.wait_for_event("extension_ui_request")
        process.send({"type": "extension_ui_response", "id": asked["id"], "cancelled": True})
        told = process.wait_for_event("extension_ui_request")
        assert told["message"] == "Mode unchanged: tree"
        # Input that ends while a dialog waits answers it as cancelled; the mode ends cleanly.
        process.request({"type": "prompt", "message": "/mode off"})
        process.wait_for_event("extension_ui_request")
        assert process.close() == 0


@pytest.mark.pi
def test_the_end_of_input_stops_the_run_and_ends_the_mode(tmp_path: Path) -> None:
    statuses = []
    for start, where in ((pi_rpc, tmp_path / "pi"), (our_rpc, tmp_path / "ours")):
        where.mkdir()
        replies = [Reply(text_stream(API, "Never finished"), behaviour="hold", cut_after=1)]
        with WireServer(replies) as server, start(where, server.base_url) as process:
            process.request({"type": "prompt", "message": "first"})
            assert server.arrived.wait(30)
            process.wait_for_event("message_update")
            statuses.append(process.close())
    assert statuses == [0, 0]
    # Pi writes a session file once an answer is complete, so it keeps nothing of this
    # one; ctxmodes keeps the prompt and the answer as far as it came, marked aborted.
    (kept,) = (tmp_path / "ours" / "agent").glob("sessions/*/*.jsonl")
    messages = [
        entry["message"]
        for entry in map(json.loads, kept.read_text().splitlines())
        if entry["type"] == "message"
    ]
    assert [message["role"] for message in messages] == ["user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"
