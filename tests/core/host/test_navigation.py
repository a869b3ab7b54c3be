"""Tree navigation: the capability modes use, its refusals, hooks and summaries."""

from __future__ import annotations

import pytest
from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes import NavigationRequest, hookimpl
from ctxmodes.errors import CtxmodesError, StaleContextError
from ctxmodes.events import TreeDecision
from ctxmodes.host import records
from ctxmodes.host.errors import SessionBusyError


def user_entries(rig):
    messages = [e for e in rig.file_entries() if e["type"] == "message"]
    return [e for e in messages if e["message"]["role"] == "user"]


def test_a_mode_navigates_from_agent_settled_as_an_internal_rollover(make_rig):
    """Tree's two-phase rollover: the tool records and aborts, settled navigates."""
    trees = []

    class Rollover:
        pending: str | None = None

        @hookimpl
        def ctx_agent_settled(self, session):
            if self.pending is None:
                return
            target, self.pending = self.pending, None
            assert session.navigation.ready
            result = session.navigation.navigate_tree(
                NavigationRequest(target, summarize=True, internal=True)
            )
            trees.append(result)

        @hookimpl
        def ctx_session_tree(self, session, event):
            trees.append(event)

    rollover = Rollover()

    def new_context(ctx):
        session = ctx.session
        assert not session.navigation.ready  # a run is active
        with pytest.raises(SessionBusyError):
            session.navigation.navigate_tree(NavigationRequest(user_entries(rig)[0]["id"]))
        rollover.pending = user_entries(rig)[0]["id"]
        session.abort()

    rig = make_rig(
        [tool_response("echo", {"text": "x"})],
        summaries=["what happened"],
        plugins=[ToolsPlugin(EchoTool(on_run=new_context)), rollover],
    )
    rig.session.prompt("first window")
    event, result = trees
    assert event.internal is True
    assert result.summary_entry is not None
    assert result.editor_text == "first window"
    # The tool result and the aborted answer are on the archived side branch.
    summary = rig.file_entries()[-1]
    assert summary["type"] == "branch_summary"
    assert summary["summary"].endswith("what happened")
    archived = {e["id"]: e for e in rig.file_entries()}[summary["fromId"]]
    assert archived["message"]["stopReason"] == "aborted"
    assert rig.types().count("agent_settled") == 1
    assert [r.internal for r in rig.of(records.TreeNavigated)] == [True]


def test_navigation_to_an_assistant_entry_with_a_label(make_rig):
    rig = make_rig([text_response("a1"), text_response("a2")])
    rig.session.prompt("q1")
    rig.session.prompt("q2")
    first_answer = [e for e in rig.file_entries() if e["type"] == "message"][1]
    result = rig.session.navigate_tree(NavigationRequest(first_answer["id"], label="checkpoint"))
    assert result.editor_text is None
    label = rig.file_entries()[-1]
    assert label["type"] == "label"
    assert label["targetId"] == first_answer["id"]
    assert label["parentId"] == first_answer["id"]
    assert rig.session.session_manager.get_leaf_id() == label["id"]
    assert [m.role for m in rig.session.messages] == ["user", "assistant"]


def test_navigation_without_summary_or_label_writes_nothing(make_rig):
    rig = make_rig([text_response("a1"), text_response("a2")])
    rig.session.prompt("q1")
    rig.session.prompt("q2")
    size = len(rig.file_entries())
    second_question = user_entries(rig)[1]
    result = rig.session.navigate_tree(NavigationRequest(second_question["id"]))
    assert result.editor_text == "q2"
    assert rig.session.session_manager.get_leaf_id() == second_question["parentId"]
    assert len(rig.file_entries()) == size
    # Navigating to where the leaf is does nothing.
    again = rig.session.navigate_tree(NavigationRequest(second_question["parentId"]))
    assert not again.cancelled
    assert rig.types().count("session_tree") == 1


def test_before_tree_can_cancel_or_supply_the_summary(make_rig):
    class Decider:
        decision: TreeDecision | None = None
        preparations: list = []  # noqa: RUF012

        @hookimpl
        def ctx_session_before_tree(self, session, preparation):
            self.preparations.append(preparation)
            return self.decision

    decider = Decider()
    rig = make_rig([text_response("a1"), text_response("a2")], plugins=[decider])
    rig.session.prompt("q1")
    rig.session.prompt("q2")
    leaf = rig.session.session_manager.get_leaf_id()
    target = user_entries(rig)[0]["id"]

    decider.decision = TreeDecision(cancel=True)
    result = rig.session.navigate_tree(NavigationRequest(target, summarize=True))
    assert result.cancelled
    assert rig.session.session_manager.get_leaf_id() == leaf
    assert rig.provider.calls == 2  # no summary call

    decider.decision = TreeDecision(summary="mine", summary_details={"by": "plugin"})
    result = rig.session.navigate_tree(NavigationRequest(target, summarize=True))
    entry = rig.file_entries()[-1]
    assert entry["summary"] == "mine"
    assert entry["details"] == {"by": "plugin"}
    assert entry["fromHook"] is True
    assert entry["fromId"] == leaf
    assert rig.provider.calls == 2
    preparation = decider.preparations[-1]
    assert preparation.summarize
    assert not preparation.internal
    # The target is on the old path, so it is the common ancestor and is not summarized.
    assert preparation.common_ancestor_id == target
    assert [e.id for e in preparation.entries_to_summarize] == [
        e["id"] for e in rig.file_entries()[3:6]
    ]


def test_aborting_the_summary_cancels_the_navigation(make_rig):
    rig = make_rig([text_response("a1")], summaries=["never used"])
    rig.session.prompt("q1")
    leaf = rig.session.session_manager.get_leaf_id()

    def abort_summary(record):
        if isinstance(record, records.ProviderRequested) and record.request.purpose != "turn":
            rig.session.abort()

    rig.session.subscribe(abort_summary)
    result = rig.session.navigate_tree(
        NavigationRequest(user_entries(rig)[0]["id"], summarize=True)
    )
    assert result.cancelled
    assert result.aborted
    assert rig.session.session_manager.get_leaf_id() == leaf
    assert rig.session.is_idle()


def test_unknown_target_and_navigation_inside_a_run(make_rig):
    errors = []

    def navigate_inside(ctx):
        try:
            ctx.session.navigate_tree(NavigationRequest("whatever"))
        except SessionBusyError as exc:
            errors.append(str(exc))

    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(EchoTool(on_run=navigate_inside))],
    )
    rig.session.prompt("go")
    assert errors == ["Wait for the current response to finish before navigating the session tree."]
    with pytest.raises(CtxmodesError, match="Entry nope not found"):
        rig.session.navigate_tree(NavigationRequest("nope"))


def test_capability_is_stale_after_the_session_is_replaced(make_rig):
    rig = make_rig([])
    old = rig.session
    navigation = old.navigation
    rig.host.new_session()
    assert not navigation.ready
    with pytest.raises(StaleContextError):
        navigation.navigate_tree(NavigationRequest("x"))
    with pytest.raises(StaleContextError):
        old.send_custom_message("late", "text")
    assert rig.session.navigation.ready


def test_input_during_a_branch_summary_is_held_until_the_navigation_ends(make_rig):
    rig = make_rig([text_response("a1"), text_response("a2")], summaries=["s"])
    rig.session.prompt("q1")
    target = user_entries(rig)[0]["id"]

    def type_during_summary(record):
        if isinstance(record, records.ProviderRequested) and record.request.purpose != "turn":
            rig.session.submit("typed while summarizing")

    rig.session.subscribe(type_during_summary)
    rig.clear()
    rig.session.navigate_tree(NavigationRequest(target, summarize=True))
    types = rig.types()
    # Held, then delivered as a prompt once the navigation is over.
    assert types.index("session_tree") < types.index("input")
    kinds = [e["type"] for e in rig.file_entries()[-3:]]
    assert kinds == ["branch_summary", "message", "message"]
    assert rig.messages_in_file()[-2]["content"][0]["text"] == "typed while summarizing"
    assert types.count("agent_settled") == 1  # for the prompt, none for the navigation


def test_tree_command_offers_the_target_text_to_an_empty_editor(make_rig):
    rig = make_rig([text_response("a1"), text_response("a2")])
    rig.session.prompt("first")
    rig.session.prompt("second")
    first, second = (e["id"] for e in user_entries(rig))
    rig.session.submit(f"/tree {second}")
    assert rig.ui.editor_text == "second"
    rig.session.submit(f'/tree {first} --label "start over"')
    assert rig.ui.editor_text == "second"  # not overwritten: the user was composing
    label = rig.file_entries()[-1]
    assert (label["type"], label["targetId"], label["label"]) == ("label", first, "start over")
    assert "agent_settled" not in rig.types()[rig.types().index("session_tree") :]
