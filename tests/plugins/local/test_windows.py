"""Window identity in Local: window 0 on the first input, ``new_context`` appending the next
marker and starting the next turn, at most one pending rollover, and the thread hint."""

from __future__ import annotations

import json

from support.local_rig import (
    call,
    developer_texts,
    markers,
    record_kinds,
    sent_text,
    text,
    tool_results,
    user_entries,
    window_of,
)

import ctxmodes_local
from ctxmodes import hookimpl
from ctxmodes.session.models import TextContent
from ctxmodes.windows.tools import NEW_CONTEXT_ALREADY_SCHEDULED, NEW_CONTEXT_STARTED


def test_window_zero_opens_on_the_first_input(local) -> None:
    h = local([text("hello back")])
    assert markers(h) == [], "inspecting a session must not write a window"
    h.prompt("hello")
    (marker,) = markers(h)
    assert window_of(marker) == {
        "protocol": 1,
        "kind": "window",
        "firstWindowId": window_of(marker)["currentWindowId"],
        "currentWindowId": window_of(marker)["currentWindowId"],
        "windowNumber": 0,
    }
    (user,) = user_entries(h)
    assert user.parent_id == marker.id, "the window opens right before the input"


def test_enabling_local_mid_session_starts_a_fresh_window(ctx_host) -> None:
    # A session run without any mode (which writes byte for byte what Off writes), then
    # Local switched on.
    h = ctx_host(
        [text("answer before management"), text("managed answer")],
        plugins=[ctxmodes_local],
        mode=None,
    )
    h.prompt("request before management")
    assert markers(h) == []
    h.host.switch_mode("local")
    assert markers(h) == [], "switching the mode writes nothing by itself"
    h.prompt("managed request")
    (marker,) = markers(h)
    assert window_of(marker)["windowNumber"] == 0
    branch = [entry.id for entry in h.manager.get_branch()]
    unmanaged, managed = user_entries(h)
    assert branch.index(unmanaged.id) < branch.index(marker.id) < branch.index(managed.id)
    before, after = h.requests()
    assert "request before management" in sent_text(before)
    # The fresh window leaves the unmanaged history out of the model's view.
    assert "before management" not in sent_text(after)
    assert [m.role for m in after.messages] == ["developer", "user"]


def test_new_context_appends_the_next_marker_and_starts_a_turn(local) -> None:
    h = local([call("new_context"), text("working in window 1")])
    h.prompt("start")
    first, second = markers(h)
    old, new = window_of(first), window_of(second)
    assert list(new) == [
        "protocol",
        "kind",
        "firstWindowId",
        "currentWindowId",
        "previousWindowId",
        "windowNumber",
        "trimPreviousWindow",
    ]
    assert new["kind"] == "window"
    assert new["firstWindowId"] == old["firstWindowId"]
    assert new["previousWindowId"] == old["currentWindowId"]
    assert new["currentWindowId"] not in (old["currentWindowId"], old["firstWindowId"])
    assert new["windowNumber"] == old["windowNumber"] + 1
    assert new["trimPreviousWindow"] is True
    (result,) = tool_results(h, "new_context")
    assert result.content == [TextContent(text=NEW_CONTEXT_STARTED)]
    assert result.details == {"started": True}
    # Appended right after the tool batch, and the same run went on into the new window.
    assert h.manager.get_entry(second.parent_id).message is result
    assert record_kinds(h, "AgentStarted", "AgentSettled") == ["AgentStarted", "AgentSettled"]
    _, continued = h.requests()
    assert developer_texts(continued) == [second.content]


def test_at_most_one_rollover_is_pending(local) -> None:
    h = local(
        [
            {"tool_calls": [{"name": "new_context"}, {"name": "new_context"}]},
            text("window 1"),
            call("new_context"),
            text("window 2"),
        ]
    )
    h.prompt("start")
    results = tool_results(h, "new_context")
    assert [r.content for r in results] == [
        [TextContent(text=NEW_CONTEXT_STARTED)],
        [TextContent(text=NEW_CONTEXT_ALREADY_SCHEDULED)],
    ]
    assert [r.details for r in results] == [{"started": True}, {"started": False}]
    assert [window_of(m)["windowNumber"] for m in markers(h)] == [0, 1]
    # Once a request has shown the new window, the next rollover is accepted again.
    h.prompt("next")
    assert [window_of(m)["windowNumber"] for m in markers(h)] == [0, 1, 2]


def test_the_new_marker_names_the_checkpoint_and_the_previous_user_items(local) -> None:
    checkpoint = "request: ship é\nnext: tests"
    h = local(
        [
            text("noted"),
            call("notes", action="write_file", path="checkpoint.md", text=checkpoint),
            call("new_context"),
            text("resuming"),
        ]
    )
    h.prompt("first request")
    h.prompt("second request")
    first, second = markers(h)
    users = [entry.id for entry in user_entries(h)]
    recovery = {"window_id": window_of(first)["currentWindowId"], "user_item_ids": users[::-1]}
    hint = (
        "Recent notes (up to 5, most-recent first):\n"
        f"- /root/notes/checkpoint.md (2 lines, {len(checkpoint.encode())} UTF-8 bytes)\n"
        "Previous window history IDs: " + json.dumps(recovery, separators=(",", ":"))
    )
    assert f"{hint}\n</context_window>" in second.content
    assert "Recent notes" not in first.content, "window 0 has nothing to recover"


def test_steering_queued_in_the_turn_that_calls_new_context_enters_the_new_window(local) -> None:
    class Typist:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "get_context_remaining":
                session.submit("steered before the rollover", streaming_behavior="steer")

    both = {
        "tool_calls": [
            {"name": "get_context_remaining", "arguments": {}},
            {"name": "new_context", "arguments": {}},
        ]
    }
    h = local([both, text("window 1 starts"), text("answer to the steering")], plugins=[Typist()])
    h.prompt("start")
    _, second = markers(h)
    branch = h.manager.get_branch_ids()
    (steered,) = [e for e in user_entries(h) if "steered before the rollover" in str(e.message)]
    # After the marker, so the model's projection of the new window holds it ...
    assert branch.index(second.id) < branch.index(steered.id)
    # ... and a request of the new window carried it.
    assert "steered before the rollover" in sent_text(h.requests()[-1])
