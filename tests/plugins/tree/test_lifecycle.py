"""The rollover lifecycle on the real agent host: the ten proofs of the Tree design.

Each test drives a scripted session through ``new_context`` and checks one property of the
two-phase rollover against the persisted file and the host's event records.
"""

from __future__ import annotations

import json
import threading

from ctxmodes import NavigationRequest, hookimpl
from ctxmodes.providers.base import DeveloperMessage
from ctxmodes.session.models import (
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    ImageContent,
    MessageEntry,
    ToolResultMessage,
    UserMessage,
)
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes.windows.note_entries import NOTE_SNAPSHOT_CUSTOM_TYPE
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE, parse_manifest


def rollover_entries(h, number: int = 0):
    """The entries rollover ``number`` appended: summary, manifest, snapshot, marker."""
    manifest = h.of_type(TREE_ARCHIVE_CUSTOM_TYPE)[number]
    summary = h.manager.get_entry(manifest.parent_id)
    (snapshot,) = h.manager.get_children(manifest.id)
    (marker,) = h.manager.get_children(snapshot.id)
    return summary, manifest, snapshot, marker


def text_of(entry) -> str:
    message = entry.message
    content = message.content
    return content if isinstance(content, str) else "".join(b.text for b in content)


def test_navigation_is_ready_on_startup_and_after_resume(harness, respond) -> None:
    h = harness(
        [
            respond.call("new_context"),
            respond.text("window 1"),
            respond.call("new_context"),
            respond.text("window 2"),
        ]
    )
    assert h.session.navigation.ready
    h.session.prompt("start")
    assert len(h.mode.parts.state.archives.archives) == 1
    h.host.resume_session(h.manager.session_file)
    assert h.session.navigation.ready
    # The resumed session rebuilt its archives and window identity from the file.
    assert len(h.mode.parts.state.archives.archives) == 1
    assert h.mode.windows.current.window_number == 1
    h.session.prompt("again")
    archives = h.mode.parts.state.archives.archives
    assert len(archives) == 2
    assert h.mode.windows.current.window_number == 2
    assert archives[1].window_id == h.mode.windows.current.previous_window_id


def test_new_context_aborts_and_settles_exactly_once(harness, respond) -> None:
    h = harness([respond.call("new_context"), respond.text("in the new window")])
    h.session.prompt("start")
    milestones = [
        kind
        for kind in h.kinds()
        if kind in ("AgentStarted", "AgentSettled", "TreeNavigated", "ProviderRequested")
    ]
    assert milestones == [
        "AgentStarted",
        "ProviderRequested",  # window 0's only request: the new_context call
        "ProviderRequested",  # the branch summary
        "TreeNavigated",
        "AgentSettled",
        "AgentStarted",
        "ProviderRequested",
        "AgentSettled",
    ]
    assert h.mode.parts.rollover.coordinator.pending is None
    assert [r.purpose for r in h.requests("branch_summary")] == ["branch_summary"]


def test_the_exact_interval_is_archived(harness, respond) -> None:
    h = harness(
        [
            respond.call("bash", command="echo hi"),
            respond.call("new_context"),
            respond.text("continuing"),
        ]
    )
    h.session.prompt("first request")
    summary, _, _, marker = rollover_entries(h)
    old_branch = h.manager.get_branch_ids(summary.from_id)
    window_start = next(
        index
        for index, entry_id in enumerate(old_branch)
        if isinstance(h.manager.get_entry(entry_id), CustomMessageEntry | MessageEntry)
    )
    (archive,) = h.mode.parts.state.archives.archives
    assert list(archive.entry_ids) == old_branch[window_start:]
    # The summarizer saw exactly that interval.
    (summary_request,) = h.requests("branch_summary")
    conversation = summary_request.messages[0].content[0].text
    assert "first request" in conversation
    assert "new_context" in conversation
    # Nothing of window 0 remains on the active branch.
    active = set(h.manager.get_branch_ids())
    assert active.isdisjoint(archive.entry_ids)
    assert marker.id in active


def test_tool_call_result_and_deferred_custom_messages_are_archived(harness, respond) -> None:
    class DeferredProbe:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "new_context":
                # Sent during the run without a turn: held until the turn ends.
                session.send_custom_message("probe", "deferred", trigger_turn=False)

    h = harness(
        [respond.call("new_context"), respond.text("continuing")], plugins=[DeferredProbe()]
    )
    h.session.prompt("start")
    (archive,) = h.mode.parts.state.archives.archives
    archived = [h.manager.get_entry(entry_id) for entry_id in archive.entry_ids]
    calls = [
        e
        for e in archived
        if isinstance(e, MessageEntry)
        and any(getattr(b, "name", None) == "new_context" for b in e.message.content)
    ]
    results = [
        e
        for e in archived
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    ]
    probes = [e for e in archived if getattr(e, "custom_type", None) == "probe"]
    assert len(calls) == 1
    assert [r.message.tool_name for r in results] == ["new_context"]
    assert len(probes) == 1
    # The probe came after the tool result: nothing was lost at the turn boundary.
    assert archived.index(probes[0]) > archived.index(results[0])
    assert archive.summary.from_id == archived[-1].id


def test_manifest_snapshot_and_boundary_are_appended_in_order(harness, respond) -> None:
    h = harness([respond.call("new_context"), respond.text("continuing")])
    h.session.prompt("start")
    summary, manifest, snapshot, marker = rollover_entries(h)
    assert isinstance(summary, BranchSummaryEntry)
    assert isinstance(manifest, CustomEntry)
    assert manifest.custom_type == TREE_ARCHIVE_CUSTOM_TYPE
    assert snapshot.custom_type == NOTE_SNAPSHOT_CUSTOM_TYPE
    assert isinstance(marker, CustomMessageEntry)
    assert marker.custom_type == CONTEXT_WINDOW_CUSTOM_TYPE
    data = parse_manifest(manifest.data)
    assert data is not None
    assert (data.summary_entry_id, data.archived_leaf_id, data.branch_base_id) == (
        summary.id,
        summary.from_id,
        summary.parent_id,
    )
    first_marker = h.of_type(CONTEXT_WINDOW_CUSTOM_TYPE)[0]
    assert data.boundary_entry_id == first_marker.id
    assert data.window_id == first_marker.details["contextManagement"]["currentWindowId"]
    order = [e.id for e in h.entries()]
    assert order.index(summary.id) < order.index(manifest.id) < order.index(snapshot.id)
    assert order.index(snapshot.id) < order.index(marker.id)


def test_only_the_final_marker_starts_a_turn(harness, respond) -> None:
    h = harness([respond.call("new_context"), respond.text("continuing")])
    h.session.prompt("start")
    _, manifest, snapshot, marker = rollover_entries(h)
    navigated = h.kinds().index("TreeNavigated")
    after = h.records[navigated:]
    started = [i for i, r in enumerate(after) if type(r).__name__ == "AgentStarted"]
    assert len(started) == 1
    # The continuation run's first message is the marker, persisted after the recovery state.
    first = next(r for r in after[started[0] :] if type(r).__name__ == "MessageEnded")
    assert first.entry_id == marker.id
    details = marker.details["contextManagement"]
    assert details["windowNumber"] == 1
    assert "summary_item_id" in marker.content
    assert snapshot.parent_id == manifest.id


def test_editor_text_survives(harness, respond) -> None:
    h = harness([respond.call("new_context"), respond.text("continuing")])
    # An interactive editor: a navigation's editor text lands in it when it is empty.
    ui = h.ui

    def editor_follows_navigation(record) -> None:
        text = getattr(record, "editor_text", None)
        if type(record).__name__ == "TreeNavigated" and text and not ui.editor_text:
            ui.editor_text = text

    h.host.subscribe(editor_follows_navigation)
    h.session.prompt("start")
    assert ui.editor_text == ""  # not the boundary's text
    h2 = harness([respond.call("new_context"), respond.text("continuing")])
    h2.ui.editor_text = "half-written thought"
    h2.session.prompt("start")
    assert h2.ui.editor_text == "half-written thought"


def test_input_during_summarization_lands_after_the_new_boundary(harness, respond) -> None:
    h = harness(
        [
            respond.call("new_context"),
            respond.text("continuing in window 1"),
            respond.text("answering the typed input"),
        ]
    )
    provider = h.provider
    original = provider.stream

    def stream(request, signal):
        if request.purpose == "branch_summary":
            typist = threading.Thread(target=h.session.submit, args=("typed meanwhile",))
            typist.start()
            typist.join()
        return original(request, signal)

    provider.stream = stream  # type: ignore[method-assign]
    h.session.prompt("start")
    h.session.wait_for_idle(10)
    _, _, _, marker = rollover_entries(h)
    typed = [
        e
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, UserMessage)
        and text_of(e) == "typed meanwhile"
    ]
    assert len(typed) == 1
    branch = h.manager.get_branch_ids()
    assert typed[0].id in branch
    assert branch.index(typed[0].id) > branch.index(marker.id)
    (archive,) = h.mode.parts.state.archives.archives
    assert typed[0].id not in archive.entry_ids
    assert h.ui.notifications == []


def test_internal_rollover_keeps_notebook_state(harness, respond) -> None:
    h = harness(
        [
            respond.call("notebook", code="x = 41"),
            respond.call("new_context"),
            respond.call("notebook", code="print(x + 1)"),
            respond.text("done"),
        ]
    )
    h.session.prompt("start")
    results = [
        e.message
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, ToolResultMessage)
        and e.message.tool_name == "notebook"
    ]
    assert "42" in results[-1].content[0].text
    assert not results[-1].is_error


def test_user_navigation_resets_notebook_state(harness, respond) -> None:
    h = harness(
        [
            respond.call("notebook", code="x = 41"),
            respond.call("new_context"),
            respond.text("window 1"),
            respond.call("notebook", code="print(x)"),
            respond.text("done"),
        ]
    )
    h.session.prompt("start")
    (archive,) = h.mode.parts.state.archives.archives
    archived_result = next(
        entry_id
        for entry_id in archive.entry_ids
        if isinstance(getattr(h.manager.get_entry(entry_id), "message", None), ToolResultMessage)
    )
    # The user goes back into the archived window: an ordinary navigation.
    h.session.navigate_tree(NavigationRequest(archived_result))
    assert not [r for r in h.records if type(r).__name__ == "TreeNavigated"][-1].internal
    assert h.mode.parts.state.archives.archives == ()
    assert h.mode.windows.current.window_number == 0
    h.session.prompt("use x")
    result = [
        e.message
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, ToolResultMessage)
        and e.message.tool_name == "notebook"
    ][-1]
    assert "NameError" in result.content[0].text or result.is_error


def test_input_sent_while_the_old_run_ends_is_held_for_the_new_window(harness, respond) -> None:
    class Typist:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "new_context":
                session.submit("typed while the window closes", streaming_behavior="steer")

    h = harness(
        [
            respond.call("new_context"),
            respond.text("window 1"),
            respond.text("answer to the typed input"),
        ],
        plugins=[Typist()],
    )
    h.session.prompt("start")
    _, _, _, marker = rollover_entries(h)
    branch = h.manager.get_branch_ids()
    typed = [
        e
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, UserMessage)
        and text_of(e) == "typed while the window closes"
    ]
    assert len(typed) == 1
    assert branch.index(typed[0].id) > branch.index(marker.id)
    # No aborted request was made for it in the old window.
    assert not [
        e
        for e in h.entries()
        if isinstance(e, MessageEntry) and getattr(e.message, "stop_reason", None) == "aborted"
    ]


def test_input_with_images_held_for_the_new_window_keeps_its_images(harness, respond) -> None:
    image = ImageContent(mime_type="image/png", data="iVBORw0KGgo=")

    class Typist:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "new_context":
                session.submit("look at this", images=[image], streaming_behavior="steer")

    h = harness(
        [respond.call("new_context"), respond.text("window 1"), respond.text("seen")],
        plugins=[Typist()],
    )
    h.session.prompt("start")
    _, _, _, marker = rollover_entries(h)
    [typed] = [
        e
        for e in h.entries()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, UserMessage)
        and e.message.content[0].text == "look at this"
    ]
    assert typed.message.content[1:] == [image]
    branch = h.manager.get_branch_ids()
    assert branch.index(typed.id) > branch.index(marker.id)


def test_messages_queued_in_the_turn_that_calls_new_context_follow_the_marker(
    harness, respond
) -> None:
    class Typist:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "get_context_remaining":
                # Typed while the turn's tools run, before new_context was called: queued in
                # the host, where the aborted run would have delivered them.
                session.submit("steered before the rollover", streaming_behavior="steer")
                session.submit("follow-up before the rollover", streaming_behavior="follow_up")

    both = {
        "text": "checking, then rolling over",
        "tool_calls": [
            {"name": "get_context_remaining", "arguments": {}},
            {"name": "new_context", "arguments": {}},
        ],
    }
    h = harness(
        [both, respond.text("window 1"), respond.text("answer to the follow-up")],
        plugins=[Typist()],
    )
    h.session.prompt("start")
    _, _, _, marker = rollover_entries(h)
    branch = h.manager.get_branch_ids()
    users = [
        (text_of(e), e.id)
        for e in h.entries()
        if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)
    ]
    (steered,) = [i for t, i in users if t == "steered before the rollover"]
    (follow_up,) = [i for t, i in users if t == "follow-up before the rollover"]
    # Both are on the new window's branch, after its marker, in the order they were queued,
    # and nowhere in the archived window.
    assert branch.index(marker.id) < branch.index(steered) < branch.index(follow_up)
    # The new window's first request already carries the steering.
    first_request = h.requests()[-2]
    assert "steered before the rollover" in str(first_request.messages)
    assert "follow-up before the rollover" not in str(first_request.messages)


def test_a_plugin_turn_requested_during_the_rollover_navigation_runs_after_the_marker(
    harness, respond
) -> None:
    class Reactor:
        """A third-party plugin that reacts to every tree navigation with a turn."""

        @hookimpl
        def ctx_session_tree(self, session, event) -> None:
            session.send_custom_message("reactor", "the tree moved", trigger_turn=True)

        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name == "new_context":
                # While the aborted run is still ending.
                session.send_custom_message("reactor", "a window closes", trigger_turn=True)

    h = harness(
        [respond.call("new_context"), respond.text("window 1"), respond.text("reacted")],
        plugins=[Reactor()],
    )
    h.session.prompt("start")
    _, _, snapshot, marker = rollover_entries(h)
    assert marker.parent_id == snapshot.id
    branch = h.manager.get_branch_ids()
    closing, reaction = h.of_type("reactor")
    assert (closing.content, reaction.content) == ("a window closes", "the tree moved")
    assert branch.index(marker.id) < branch.index(closing.id) < branch.index(reaction.id)
    # Every request of the new window opens with its marker, the reaction after it.
    new_window = h.requests()[1:]
    assert new_window
    for request in new_window:
        first = request.messages[0]
        assert isinstance(first, DeveloperMessage)
        assert first.content[0].text == marker.content
    assert "a window closes" in str(new_window[0].messages[1:])
    assert "the tree moved" in str(new_window[-1].messages[1:])


def test_a_fork_says_its_history_starts_at_the_fork_and_the_original_keeps_its_archives(
    harness, respond
) -> None:
    from ctxmodes.session.manager import SessionManager
    from ctxmodes.windows.retrieval import answer_history
    from ctxmodes_tree.mode import fork_notice
    from ctxmodes_tree.state import TreeState

    h = harness(
        [
            respond.call("new_context"),
            respond.call("new_context"),
            respond.text("window 2"),
            respond.text("in the fork"),
        ],
        summaries=["summary of window 0", "summary of window 1"],
    )
    h.session.prompt("start")
    original = h.manager.session_file
    assert len(h.mode.parts.state.archives.archives) == 2
    h.manager.flush()  # the fork copies what the file holds
    h.host.fork_session(h.manager.get_leaf_id())
    fork = h.manager.session_file
    assert fork != original
    assert ("warning", fork_notice(2)) in h.ui.notifications
    # One notice for the fork, not one warning per archive left behind.
    assert not [text for _, text in h.ui.notifications if "is unavailable" in text]
    # The fork's history is its current window only ...
    listed = json.loads(answer_history(h.mode.parts.state.reader(), "list_windows", {}).text)
    assert [w["window_id"] for w in listed["windows"]] == [h.mode.windows.current.current_window_id]
    # ... and it goes on in that window.
    h.session.prompt("continue")
    assert "continue" in str(h.requests()[-1].messages)
    # The original file still holds both archives, readable as before.
    with SessionManager.open(original, read_only=True) as manager:
        state = TreeState(manager)
        assert len(state.archives.archives) == 2
        assert not state.archives.rejected
        state.close()
