"""Sessions the host writes open in the real Pi 0.85 with the context we see."""

from __future__ import annotations

import pytest
from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response
from support.pi_oracle import require_pi

from ctxmodes import NavigationRequest
from ctxmodes.compaction import CompactionSettings
from ctxmodes.host.options import HostOptions
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.models import TextContent, to_json


@pytest.mark.pi
def test_pi_sees_the_same_session(make_rig):
    pi = require_pi()
    rig = make_rig(
        [
            tool_response("echo", {"text": "tool output"}),
            text_response("first answer " * 20),
            text_response("second answer " * 20),
            text_response("after navigating " * 20),
            text_response("after compacting"),
        ],
        summaries=["branch summary text", "compaction summary text", "turn prefix text"],
        plugins=[ToolsPlugin(EchoTool())],
        options=HostOptions(compaction=CompactionSettings(keep_recent_tokens=40)),
    )
    session = rig.session
    session.prompt("first question " * 20)
    session.send_custom_message("note", [TextContent(text="a custom note")], details={"n": 1})
    session.prompt("second question")
    first_user = next(e for e in rig.file_entries() if e["type"] == "message")
    session.navigate_tree(NavigationRequest(first_user["id"], summarize=True, label="retry"))
    session.prompt("rephrased question")
    session.compact("keep the numbers")
    session.prompt("last question")

    manager = session.session_manager
    first_answer = next(
        e["id"]
        for e in rig.file_entries()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    )
    (answer,) = pi.open_many([{"file": str(manager.session_file), "at": [first_answer]}])
    assert "openError" not in answer
    assert answer["entryCount"] == manager.entry_count()
    assert answer["leafId"] == manager.get_leaf_id()
    assert answer["branchIds"] == manager.get_branch_ids()
    context = manager.build_session_context()
    assert answer["context"] == context.to_json()
    assert answer["llm"] == [to_json(m) for m in convert_to_llm(context.messages)]
    position = manager.position_at(first_answer)
    assert answer["positions"][first_answer]["context"] == position.context.to_json()
    # What the host ran on is what Pi rebuilds: the live context equals the stored one.
    assert [to_json(m) for m in session.messages] == context.to_json()["messages"]
