"""A fork a plugin cancels, as Pi's: its extensions are asked before the entry is looked
up, so with an extension (a plugin) that cancels every fork, RPC ``fork`` answers
``cancelled`` from an entry that does not exist, one that is not a user message, and
without an entry at all. The real Pi and ctxmodes run the same requests and answer alike,
and their extension and plugin are told the same entries and positions."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream

JsonObject = dict[str, Any]

#: Cancels every fork, saying what it was told.
EXTENSION = """export default function (pi) {
  pi.on("session_before_fork", async (event, ctx) => {
    ctx.ui.notify(`${event.entryId ?? "none"} ${event.position}`);
    return { cancel: true };
  });
}
"""
PLUGIN = """from ctxmodes import SessionChangeDecision, hookimpl


@hookimpl
def ctx_session_before_fork(session, request):
    session.ui.notify(f"{request.entry_id or 'none'} {request.position}")
    return SessionChangeDecision(cancel=True)
"""


def _pi(where: Path, base_url: str) -> RpcProcess:
    extension = where / "keep.js"
    extension.write_text(EXTENSION)
    return pi_rpc(where, base_url, ["-e", str(extension)])


def _ours(where: Path, base_url: str) -> RpcProcess:
    plugins = where / "plugins"
    plugins.mkdir()
    (plugins / "fork_keeper.py").write_text(PLUGIN)
    info = plugins / "fork_keeper-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fork_keeper\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ctxmodes]\nfork_keeper = fork_keeper\n")
    path = os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")])
    return our_rpc(where, base_url, env={"PYTHONPATH": path})


def _told(process: RpcProcess) -> list[str]:
    """What the extension or plugin said, in order."""
    return [
        str(line["message"])
        for line in process.lines
        if line.get("type") == "extension_ui_request" and line.get("method") == "notify"
    ]


def _answer(response: JsonObject) -> JsonObject:
    return {key: value for key, value in response.items() if key != "id"}


def _forks(process: RpcProcess) -> JsonObject:
    """The answers to forks and clones, before and after a first exchange."""
    found: JsonObject = {"first fork": _answer(process.request({"type": "fork"}))}
    process.send({"type": "prompt", "message": "hi"})
    process.wait_for_event("agent_settled")
    entries = process.request({"type": "get_entries"})["data"]["entries"]
    reply = next(e["id"] for e in entries if e.get("message", {}).get("role") == "assistant")
    asked: list[JsonObject] = [
        {"type": "fork", "entryId": "nope"},
        {"type": "fork", "entryId": reply},
        {"type": "fork"},
        {"type": "fork", "entryId": 7},
        {"type": "clone"},
    ]
    found["forks"] = []
    for command in asked:
        found["forks"].append(_answer(process.request(command)))
    found["reply"] = reply
    after = process.request({"type": "get_entries"})["data"]["entries"]
    found["kept"] = after == entries
    return found


@pytest.mark.pi
def test_a_plugin_cancels_a_fork_before_its_entry_is_checked(tmp_path: Path) -> None:
    found = []
    for start, name in ((_pi, "pi"), (_ours, "ours")):
        where = tmp_path / name
        where.mkdir()
        with (
            WireServer([Reply(text_stream(API, "hello"))]) as server,
            start(where, server.base_url) as process,
        ):
            answers = _forks(process)
            assert process.close() == 0, process.stderr()
        reply = answers.pop("reply")
        told = [text.replace(reply, "<reply>") for text in _told(process)]
        found.append((answers, told))
    (answers, told), (our_answers, our_told) = found
    assert our_answers == answers
    assert answers["kept"] is True
    assert answers["forks"] == [
        {"type": "response", "command": command, "success": True, "data": {"cancelled": True}}
        for command in ("fork", "fork", "fork", "fork", "clone")
    ]
    assert told == [
        "none before",
        "nope before",
        "<reply> before",
        "none before",
        "7 before",
        "<reply> at",
    ]
    # An entryId that is not a string is told as no entry: ForkRequest's ids are strings.
    assert our_told == [*told[:4], "none before", told[5]]
