"""Tree's independent contracts on the real host: what the model sees, history and notes
through the tools, repeated rollovers, routing, compaction exit and the failure policy."""

from __future__ import annotations

import json

import pytest

import ctxmodes_local
import ctxmodes_off
from ctxmodes import NavigationRequest, hookimpl
from ctxmodes.events import (
    ContextProjection,
    NewContextRequest,
    RetrievalRequest,
    TreeDecision,
)
from ctxmodes.providers.base import DeveloperMessage
from ctxmodes.session.models import (
    BranchSummaryEntry,
    CompactionEntry,
    ImageContent,
    MessageEntry,
    TextContent,
    ToolResultMessage,
)
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE

SUMMARY_0 = "Window zero stored the launch code in notes."


def request_text(request) -> str:
    parts = []
    for message in request.messages:
        content = message.content
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(getattr(block, "text", "") or "" for block in content)
    return "\n".join(parts)


def tool_results(h, name: str) -> list[ToolResultMessage]:
    return [
        e.message
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, ToolResultMessage)
        and e.message.tool_name == name
    ]


def test_archived_windows_and_their_summaries_never_reach_the_model(harness, respond) -> None:
    h = harness(
        [
            respond.call("bash", command="echo secret-detail-771"),
            respond.call("new_context"),
            respond.text("window 1 reply"),
        ],
        summaries=[SUMMARY_0],
    )
    h.session.prompt("start the task")
    last = h.requests()[-1]
    text = request_text(last)
    assert SUMMARY_0 not in text
    assert "secret-detail-771" not in text
    assert "start the task" not in text
    # The window marker arrives as a developer message, first.
    assert isinstance(last.messages[0], DeveloperMessage)
    assert "summary_item_id" in last.messages[0].content[0].text


def test_history_recovers_archived_work_summary_first(harness, respond) -> None:
    h = harness(
        [
            respond.call("bash", command="echo secret-detail-771"),
            respond.call("new_context"),
            respond.call("history", action="search_contents", query="771"),
            respond.text("found"),
        ],
        summaries=["The launch code ends in 771."],
    )
    h.session.prompt("start")
    (result,) = tool_results(h, "history")
    items = json.loads(result.content[0].text)["items"]
    (archive,) = h.mode.parts.state.archives.archives
    assert items[0]["item_id"] == archive.summary.id  # the summary ranks first
    assert any("secret-detail-771" in item["truncated_content"] for item in items[1:])


def test_notes_survive_the_cut(harness, respond) -> None:
    h = harness(
        [
            respond.call("notes", action="write_file", path="plan.md", text="step one\n"),
            respond.call("new_context"),
            respond.call("notes", action="append_to_file", path="plan.md", text="step two\n"),
            respond.call("notes", action="read_file", path="plan.md"),
            respond.text("done"),
        ]
    )
    h.session.prompt("start")
    read = json.loads(tool_results(h, "notes")[-1].content[0].text)["file"]
    assert read["content"] == "step one\nstep two\n"
    # The marker of window 1 names the note.
    marker = h.of_type(CONTEXT_WINDOW_CUSTOM_TYPE)[-1]
    assert "/root/notes/plan.md" in marker.content


def test_fifty_rollovers_in_one_session(harness, respond) -> None:
    rollovers = 50
    h = harness([respond.call("new_context")] * rollovers + [respond.text("done")])
    h.session.prompt("start")
    archives = h.mode.parts.state.archives.archives
    assert len(archives) == rollovers
    assert len({a.window_id for a in archives}) == rollovers
    assert h.mode.windows.current.window_number == rollovers
    # Every request after a rollover holds only the new window: its marker.
    for request in h.requests()[1:]:
        assert len(request.messages) == 1
        assert isinstance(request.messages[0], DeveloperMessage)
    # The active branch stays short: the cut keeps archived work off it.
    assert len(h.manager.get_branch_ids()) < 4 * rollovers + 10
    windows = json.loads(
        h.mode.retrieve(
            RetrievalRequest(family="history", action="list_windows", arguments={"limit": 100})
        ).text
    )["windows"]
    assert len(windows) == rollovers + 1


def test_manual_summaries_stay_in_context(harness, respond) -> None:
    h = harness(
        [respond.call("new_context"), respond.text("window 1"), respond.text("after")],
        summaries=["Tree's own summary.", "A summary the user asked for."],
    )
    h.session.prompt("start")
    marker = h.of_type(CONTEXT_WINDOW_CUSTOM_TYPE)[-1]
    # The user navigates back to the marker's reply with a summary of what is left behind.
    h.session.prompt("one more")  # uses "after"
    reply = h.manager.get_children(marker.id)[0]
    h.session.navigate_tree(NavigationRequest(reply.id, summarize=True))
    summaries = [e for e in h.entries() if isinstance(e, BranchSummaryEntry)]
    assert len(summaries) == 2
    projected = h.mode.parts.projection.project(
        ContextProjection(
            messages=list(h.manager.build_session_context().messages),
            branch=list(h.manager.get_branch()),
        )
    )
    texts = [getattr(m, "summary", None) for m in projected]
    assert any(t and "A summary the user asked for." in t for t in texts)
    assert not any(t and "Tree's own summary." in t for t in texts)


@pytest.mark.parametrize("mode", ["off", "local", "tree"])
def test_mode_routing(harness, respond, mode: str) -> None:
    # Routing across modes needs them all installed (Tree alone is the default elsewhere).
    h = harness([respond.text("hello")], mode=mode, plugins=[ctxmodes_off, ctxmodes_local])
    h.session.prompt("hi")
    names = {tool.name for tool in h.requests()[0].tools}
    context_tools = {"new_context", "get_context_remaining", "history", "notes"}
    if mode == "off":
        assert names.isdisjoint(context_tools)
    else:
        assert context_tools <= names
        (history,) = [t for t in h.requests()[0].tools if t.name == "history"]
        assert history.parameters["properties"]["action"]["enum"] == [
            "list_windows",
            "list_items",
            "read_item",
            "search_contents",
        ]


def test_a_namespaced_history_call_is_routed_in_tree(harness) -> None:
    h = harness(
        [
            {"tool_calls": [{"name": "list_windows", "namespace": "history", "arguments": {}}]},
            {"text": "ok"},
        ]
    )
    h.session.prompt("list")
    (result,) = tool_results(h, "history")
    assert not result.is_error
    assert json.loads(result.content[0].text)["windows"][0]["item_count"] >= 1


def test_manual_compaction_is_the_exit_point(harness, respond) -> None:
    h = harness(
        [
            respond.call("bash", command="echo old-work-55"),
            respond.call("new_context"),
            respond.text("window 1 work"),
            respond.text("after leaving tree"),
        ],
        summaries=[
            SUMMARY_0,
            "Cumulative: launch code in notes; window 1 continued.",
            "Turn prefix.",
        ],
        keep_recent=1,
        plugins=[ctxmodes_off],  # the mode the session leaves Tree for
    )
    h.session.prompt("start")
    started = h.kinds().count("AgentStarted")
    compaction = h.session.compact()
    assert isinstance(compaction, CompactionEntry)
    assert compaction.summary.startswith("Cumulative")
    # Pi's summarizer saw the archived summary: it is on the active path.
    summarized = "\n".join(request_text(r) for r in h.requests("compaction"))
    assert SUMMARY_0 in summarized
    # A fresh window follows, without a turn.
    marker = h.of_type(CONTEXT_WINDOW_CUSTOM_TYPE)[-1]
    assert h.manager.get_leaf_id() == marker.id
    assert h.kinds().count("AgentStarted") == started
    # Leaving Tree now: the readable summary is the model's context; old windows stay out.
    h.host.switch_mode("off")
    h.session.prompt("continue without tree")
    text = request_text(h.requests()[-1])
    assert "Cumulative: launch code" in text
    assert "old-work-55" not in text
    assert SUMMARY_0 not in text


class CancelInternal:
    @hookimpl
    def ctx_session_before_tree(self, session, preparation):
        return TreeDecision(cancel=True) if preparation.internal else None


def test_failure_before_navigation_keeps_the_old_branch(harness, respond) -> None:
    h = harness([respond.call("new_context"), respond.text("never")], plugins=[CancelInternal()])
    h.ui.editor_text = "draft"
    h.session.prompt("start")
    leaf = h.manager.get_leaf_entry()
    assert isinstance(leaf.message, ToolResultMessage)  # the old branch, untouched
    assert not [e for e in h.entries() if isinstance(e, BranchSummaryEntry)]
    assert h.ui.notifications == [
        ("error", "Tree context rollover failed: Tree archive was cancelled")
    ]
    assert h.ui.editor_text == "draft"
    assert h.kinds().count("AgentStarted") == 1
    assert h.mode.parts.rollover.coordinator.pending is None


def test_failure_after_navigation_starts_no_turn(harness, respond, monkeypatch) -> None:
    h = harness([respond.call("new_context"), respond.text("never")])
    manager = h.manager
    original = manager.append_custom_entry

    def failing(custom_type, data=None):
        if custom_type == TREE_ARCHIVE_CUSTOM_TYPE:
            raise OSError(28, "No space left on device")
        return original(custom_type, data)

    monkeypatch.setattr(manager, "append_custom_entry", failing)
    h.ui.editor_text = "draft"
    h.session.prompt("start")
    # Navigation happened (the summary is there to inspect), but no marker and no new turn.
    assert isinstance(manager.get_leaf_entry(), BranchSummaryEntry)
    assert len(h.of_type(CONTEXT_WINDOW_CUSTOM_TYPE)) == 1
    assert h.kinds().count("AgentStarted") == 1
    ((level, message),) = h.ui.notifications
    assert level == "error"
    assert message.startswith("Tree context rollover failed: ")
    assert "No space left" in message
    assert h.ui.editor_text == "draft"


def test_after_a_failure_held_text_goes_to_the_editor_and_held_images_wait_queued(
    harness, respond
) -> None:
    image = ImageContent(mime_type="image/png", data="iVBORw0KGgo=")

    class Typist:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "new_context":
                session.submit("typed", streaming_behavior="steer")
                session.submit("with a picture", images=[image], streaming_behavior="steer")

    h = harness(
        [respond.call("new_context"), respond.text("never")],
        plugins=[CancelInternal(), Typist()],
    )
    h.ui.editor_text = "draft"
    h.session.prompt("start")
    assert h.ui.editor_text == "draft\n\ntyped"
    [queued] = h.session.take_queued("follow_up")
    assert queued.content == [TextContent(text="with a picture"), image]
    assert h.kinds().count("AgentStarted") == 1


def test_a_second_request_while_one_is_pending_is_refused(harness, respond) -> None:
    outcomes = []

    class Again:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "new_context":
                outcomes.append(
                    h.mode.parts.rollover.request(NewContextRequest(tool_call_id="again"))
                )

    h = harness([respond.call("new_context"), respond.text("window 1")], plugins=[Again()])
    h.session.prompt("start")
    (outcome,) = outcomes
    assert not outcome.started
    assert outcome.message == "A new context window is already scheduled."
    assert outcome.details == {"started": False}
    assert len(h.of_type(TREE_ARCHIVE_CUSTOM_TYPE)) == 1
    assert tool_results(h, "new_context")[0].details == {"started": True}
