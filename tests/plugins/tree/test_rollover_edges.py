"""Rollover edge cases on the real host: a session retired between ``new_context`` and the
settle, staying in Tree after ``/compact``, and the window opened after a navigation that
leaves no marker on the branch."""

from __future__ import annotations

import threading

import pytest

from ctxmodes import NavigationRequest, hookimpl
from ctxmodes.providers.base import DeveloperMessage
from ctxmodes.session.models import BranchSummaryEntry
from ctxmodes.windows.marker import CONTEXT_WINDOW_CUSTOM_TYPE
from ctxmodes_tree.manifest import TREE_ARCHIVE_CUSTOM_TYPE


@pytest.mark.parametrize("retire", ["new_session", "close"])
def test_a_session_being_replaced_is_not_rolled_over(harness, respond, retire: str) -> None:
    """``/new`` (or quitting) requested from another thread between ``new_context`` and the
    settle: the old session must neither navigate nor start the continuation turn while it
    is being retired."""
    replacing = threading.Event()
    replacer: list[threading.Thread] = []

    class NewSessionMeanwhile:
        @hookimpl
        def ctx_tool_result(self, session, event) -> None:
            if event.tool_name != "new_context":
                return
            original = session.abort

            def abort() -> None:
                original()
                replacing.set()

            session.abort = abort  # the replacement aborts the run, then waits for it
            thread = threading.Thread(target=getattr(h.host, retire))
            replacer.append(thread)
            thread.start()
            assert replacing.wait(5)

    h = harness(
        [respond.call("new_context"), respond.text("must not run")],
        plugins=[NewSessionMeanwhile()],
    )
    old = h.session
    old_manager = old.session_manager
    old.prompt("start")
    replacer[0].join(5)
    assert not replacer[0].is_alive()
    assert old.is_stale
    old_entries = list(old_manager.get_entries())
    assert not [e for e in old_entries if isinstance(e, BranchSummaryEntry)]
    assert not [
        e for e in old_entries if getattr(e, "custom_type", None) == TREE_ARCHIVE_CUSTOM_TYPE
    ]
    assert h.requests("branch_summary") == []
    assert h.kinds().count("AgentStarted") == 1
    assert h.ui.notifications == [
        (
            "error",
            "Tree context rollover failed: Tree context management is not ready for this session",
        )
    ]


def _request_text(request) -> str:
    parts = []
    for message in request.messages:
        content = message.content
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(getattr(block, "text", "") or "" for block in content)
    return "\n".join(parts)


def test_after_manual_compaction_later_windows_see_only_their_own_work(harness, respond) -> None:
    """Staying in Tree after ``/compact``: Pi's readable summary and the tail it kept sit on
    the active path before the fresh window, where no tree cut removes them; no later window
    may receive them (the model gets no automatic conversation summary)."""
    h = harness(
        [
            respond.call("new_context"),
            respond.text("kept-tail-reply-31"),
            respond.text("in the window after the compaction"),
            respond.call("new_context"),
            respond.text("in the window after the next rollover"),
        ],
        summaries=[
            "Tree summary.",
            "Cumulative-summary-77.",
            "Turn prefix.",
            "Second tree summary.",
        ],
        keep_recent=1,
    )
    h.session.prompt("start")
    h.session.compact()
    h.session.prompt("stay in tree")
    after_compaction = h.requests()[-1]
    h.session.prompt("roll again")
    after_rollover = h.requests()[-1]
    for request in (after_compaction, after_rollover):
        assert isinstance(request.messages[0], DeveloperMessage)
        text = _request_text(request)
        assert "Cumulative-summary-77." not in text
        assert "kept-tail-reply-31" not in text
    assert h.ui.notifications == []
    assert [type(m).__name__ for m in after_rollover.messages] == ["DeveloperMessage"]


def test_navigating_to_a_window_marker_continues_the_archived_identity(harness, respond) -> None:
    """Selecting window 1's marker in ``/tree`` moves the leaf to the rollover's snapshot: no
    window marker is left on the branch (the tree cut archived window 0's). The fresh window
    must continue from the archived window, not restart the session at window 0."""
    h = harness([respond.call("new_context"), respond.text("window 1")])
    h.session.prompt("start")
    (archive,) = h.mode.parts.state.archives.archives
    window_1 = h.mode.windows.current
    marker_1 = h.of_type(CONTEXT_WINDOW_CUSTOM_TYPE)[-1]
    h.session.navigate_tree(NavigationRequest(marker_1.id))
    fresh = h.mode.windows.current
    assert fresh is not None
    assert h.manager.get_leaf_entry().custom_type == CONTEXT_WINDOW_CUSTOM_TYPE
    assert fresh.current_window_id != window_1.current_window_id
    assert fresh.first_window_id == window_1.first_window_id
    assert fresh.previous_window_id == archive.window_id
    assert fresh.window_number == 1
    # The hint names the archived window's summary, as after a rollover.
    assert archive.summary.id in h.manager.get_leaf_entry().content
    assert h.mode.parts.state.archives.archives == (archive,)


def test_an_unexpected_error_does_not_leave_input_held(harness, respond) -> None:
    """A rollover step that fails with an unexpected exception (a provider raising instead
    of reporting an error) is reported by the host; the rollover must still end, or every
    later input would be held for a rollover that never completes."""
    h = harness([respond.call("new_context"), respond.text("answering the next prompt")])
    h.ui.editor_text = "draft"
    original = h.provider.stream

    def stream(request, signal):
        if request.purpose == "branch_summary":
            raise RuntimeError("connection reset")
        return original(request, signal)

    h.provider.stream = stream  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="connection reset"):
        h.session.prompt("start")
    assert not h.mode.parts.rollover.in_progress
    assert h.ui.editor_text == "draft"
    h.session.prompt("after the failure")
    assert "after the failure" in _request_text(h.requests()[-1])
