"""Custom messages, queued input, runs started from hooks, and input held while compacting."""

from __future__ import annotations

import pytest
from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes import hookimpl
from ctxmodes.compaction import CompactionSettings
from ctxmodes.errors import CtxmodesError
from ctxmodes.host import records
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.host.options import HostOptions

# Keep almost nothing, so that even a tiny session has something to compact.
SMALL_KEEP = HostOptions(compaction=CompactionSettings(keep_recent_tokens=10))


def kinds(entries):
    """``message:<role>`` / ``custom_message:<type>`` / the entry type, per entry."""
    out = []
    for entry in entries:
        if entry["type"] == "message":
            out.append(f"message:{entry['message']['role']}")
        elif entry["type"] == "custom_message":
            out.append(f"custom:{entry['customType']}")
        else:
            out.append(entry["type"])
    return out


def test_custom_message_while_idle_is_appended_without_a_run(make_rig):
    rig = make_rig([text_response("first")])
    rig.session.prompt("a first prompt writes the session file")
    rig.clear()
    rig.session.send_custom_message("note", "remember this", details={"k": 1})
    assert kinds(rig.file_entries())[-1] == "custom:note"
    entry = rig.file_entries()[-1]
    assert list(entry) == [
        "type",
        "customType",
        "content",
        "display",
        "details",
        "id",
        "parentId",
        "timestamp",
    ]
    assert rig.types() == ["message_start", "message_end"]
    assert rig.session.messages[-1].custom_type == "note"


def test_triggered_custom_message_while_idle_runs_with_it_as_the_only_prompt(make_rig):
    rig = make_rig([text_response("seen")])
    rig.clear()
    rig.session.send_custom_message("marker", "window 1", trigger_turn=True)
    assert kinds(rig.file_entries())[-2:] == ["custom:marker", "message:assistant"]
    assert "input" not in rig.types()
    assert rig.types().count("agent_settled") == 1


def test_custom_message_during_a_run(make_rig):
    def send(ctx):
        # Without a trigger: appended when the turn ends, never between call and result.
        ctx.session.send_custom_message("quiet", "later", trigger_turn=False)
        # Default while streaming: steering, delivered before the next request.
        ctx.session.send_custom_message("steered", "now")

    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(EchoTool(on_run=send))],
    )
    rig.session.prompt("go")
    assert kinds(rig.file_entries())[2:] == [
        "message:user",
        "message:assistant",
        "message:toolResult",
        "custom:quiet",
        "custom:steered",
        "message:assistant",
    ]


def test_next_turn_messages_ride_with_the_next_prompt(make_rig):
    rig = make_rig([text_response("ok")])
    rig.session.send_custom_message("context", "extra", deliver_as="next_turn")
    assert rig.file_entries() == [], "nothing is written before the first prompt"
    rig.session.prompt("question")
    assert kinds(rig.file_entries()) == [
        "model_change",
        "thinking_level_change",
        "message:user",
        "custom:context",
        "message:assistant",
    ]


def test_a_run_requested_in_agent_settled_starts_after_it(make_rig):
    order = []

    class Roller:
        done = False

        @hookimpl
        def ctx_agent_settled(self, session):
            order.append("settled")
            if not self.done:
                self.done = True
                session.send_custom_message("marker", "next window", trigger_turn=True)
                order.append("requested")

    rig = make_rig([text_response("one"), text_response("two")], plugins=[Roller()])
    rig.session.prompt("start")  # returns after both runs settled
    assert order == ["settled", "requested", "settled"]
    assert kinds(rig.file_entries())[2:] == [
        "message:user",
        "message:assistant",
        "custom:marker",
        "message:assistant",
    ]
    assert rig.types().count("agent_settled") == 2
    assert rig.session.is_idle()


def test_input_submitted_while_a_run_is_pending_is_queued_for_it(make_rig):
    class Roller:
        done = False

        @hookimpl
        def ctx_agent_settled(self, session):
            if not self.done:
                self.done = True
                session.send_custom_message("marker", "next window", trigger_turn=True)
                session.send_user_message("typed meanwhile")

    rig = make_rig([text_response("one"), text_response("two")], plugins=[Roller()])
    rig.session.prompt("start")
    assert kinds(rig.file_entries())[2:] == [
        "message:user",
        "message:assistant",
        "custom:marker",
        "message:user",
        "message:assistant",
    ]


def test_prompt_while_streaming_is_refused_and_steer_refuses_commands(make_rig):
    errors = []

    def prompt_inside(ctx):
        try:
            ctx.session.prompt("nested")
        except SessionBusyError as exc:
            errors.append(str(exc))
        try:
            ctx.session.steer("/compact")
        except CtxmodesError as exc:
            errors.append(str(exc))

    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(EchoTool(on_run=prompt_inside))],
    )
    rig.session.prompt("go")
    assert len(errors) == 2
    assert "already processing" in errors[0]
    assert "cannot be queued" in errors[1]


def test_input_during_compaction_is_held_and_delivered_after_it(make_rig):
    seen = {}

    class Typist:
        @hookimpl
        def ctx_session_before_compact(self, session, request):
            seen["compacting"] = session.is_compacting()
            seen["idle"] = session.is_idle()
            session.submit("typed during compaction")

    rig = make_rig(
        [text_response("first answer " * 20), text_response("second")],
        summaries=["the summary"],
        plugins=[Typist()],
        options=SMALL_KEEP,
    )
    rig.session.prompt("first question " * 20)
    rig.session.compact()
    assert seen == {"compacting": True, "idle": False}
    assert kinds(rig.file_entries())[-3:] == ["compaction", "message:user", "message:assistant"]
    user = rig.messages_in_file()[-2]
    assert user["content"][0]["text"] == "typed during compaction"


def test_prompt_during_compaction_is_refused(make_rig):
    errors = []

    class Prompter:
        @hookimpl
        def ctx_session_before_compact(self, session, request):
            try:
                session.prompt("now")
            except SessionBusyError as exc:
                errors.append(str(exc))

    rig = make_rig(
        [text_response("a " * 50)], summaries=["s"], plugins=[Prompter()], options=SMALL_KEEP
    )
    rig.session.prompt("q " * 50)
    rig.session.compact()
    assert errors
    assert "compaction is in progress" in errors[0]


def test_queue_updates_list_waiting_texts(make_rig):
    rig = make_rig([])
    rig.session.steer("first")
    rig.session.follow_up("second")
    updates = rig.of(records.QueueUpdated)
    assert updates[-1].steering == ("first",)
    assert updates[-1].follow_up == ("second",)


@pytest.mark.parametrize("deliver_as", ["steer", "follow_up"])
def test_queued_messages_without_a_run_start_with_the_next_prompt(make_rig, deliver_as):
    rig = make_rig([text_response("ok")])
    getattr(rig.session, deliver_as)("queued first")
    rig.session.prompt("then this")
    texts = [m["content"][0]["text"] for m in rig.messages_in_file() if m["role"] == "user"]
    # Steering joins the first turn, after the prompt; a follow-up comes once the run would
    # stop (the scripted model then has no answer left, which ends that turn in an error).
    assert texts == ["then this", "queued first"]
