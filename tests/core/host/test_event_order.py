"""The order of lifecycle events (hooks, then listener records) as Pi's AgentSession emits them."""

from __future__ import annotations

import logging
import re
import threading
import time

import pytest
from support.host_rig import BlockingTool, EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes import hookimpl
from ctxmodes.commands import Command
from ctxmodes.events import InputResult, ToolCallBlock
from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.session.models import AssistantMessage, TextContent

PROMPT_TURN = ["message_start", "message_end", "context", "provider_request"]
ANSWER = ["message_start", "message_end"]
TOOL_CALL = [
    "tool_execution_start",
    "tool_call",
    "tool_result",
    "tool_execution_end",
    "message_start",
    "message_end",
]


def test_plain_run(make_rig):
    rig = make_rig([text_response("Hello there, how can I help you today?")])
    rig.session.prompt("hi")
    assert rig.types() == [
        "session_start",
        "input",
        "agent_start",
        "turn_start",
        *PROMPT_TURN,
        *ANSWER,
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    # The answer streamed: updates come between its start and its end.
    kinds = rig.types(updates=True)
    first_update = kinds.index("message_update")
    assert kinds[first_update - 1] == "message_start"
    assert [m["role"] for m in rig.messages_in_file()] == ["user", "assistant"]
    assert rig.session.is_idle()


def test_tool_run_and_the_turn_after_it(make_rig):
    echo = EchoTool()
    rig = make_rig(
        [tool_response("echo", {"text": "ping"}), text_response("done")],
        plugins=[ToolsPlugin(echo)],
    )
    rig.session.prompt("go")
    assert rig.types() == [
        "session_start",
        "input",
        "agent_start",
        "turn_start",
        *PROMPT_TURN,
        *ANSWER,
        *TOOL_CALL,
        "turn_end",
        "turn_start",
        "context",
        "provider_request",
        *ANSWER,
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    assert echo.calls == [{"text": "ping"}]
    turns = [r.turn_index for r in rig.of(records.TurnStarted)]
    assert turns == [0, 1]
    roles = [m["role"] for m in rig.messages_in_file()]
    assert roles == ["user", "assistant", "toolResult", "assistant"]


def test_tools_run_in_source_order_and_unknown_tools_fail(make_rig):
    seen = []
    echo = EchoTool(on_run=lambda ctx: seen.append("echo"))
    rig = make_rig(
        [
            {
                "tool_calls": [
                    {"name": "echo", "arguments": {"text": "1"}},
                    {"name": "missing"},
                    {"name": "echo", "arguments": {"text": "2"}},
                ]
            },
            text_response("ok"),
        ],
        plugins=[ToolsPlugin(echo)],
    )
    rig.session.prompt("go")
    results = [m for m in rig.messages_in_file() if m["role"] == "toolResult"]
    assert [r["content"][0]["text"] for r in results] == ["1", "Tool missing not found", "2"]
    assert [r["isError"] for r in results] == [False, True, False]
    assert echo.calls == [{"text": "1"}, {"text": "2"}]


def test_length_stop_fails_its_tool_calls_without_running_them(make_rig):
    echo = EchoTool()
    rig = make_rig(
        [tool_response("echo", {"text": "x"}, stop_reason="length"), text_response("retry")],
        plugins=[ToolsPlugin(echo)],
    )
    rig.session.prompt("go")
    assert echo.calls == []
    result = next(m for m in rig.messages_in_file() if m["role"] == "toolResult")
    assert result["isError"] is True
    assert "output token limit" in result["content"][0]["text"]


def test_settled_once_after_the_tool_result_is_persisted(make_rig):
    observed = []

    class Observer:
        @hookimpl
        def ctx_agent_settled(self, session):
            roles = [m["role"] for m in rig.messages_in_file()]
            observed.append((session.is_idle(), session.is_streaming(), roles))

    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(EchoTool()), Observer()],
    )
    rig.session.prompt("go")
    assert observed == [(True, False, ["user", "assistant", "toolResult", "assistant"])]
    assert rig.types().count("agent_settled") == 1


def test_abort_mid_tool_persists_the_result_and_an_aborted_answer(make_rig):
    blocking = BlockingTool()
    echo = EchoTool()
    rig = make_rig(
        [{"tool_calls": [{"name": "block"}, {"name": "echo", "arguments": {"text": "never"}}]}],
        plugins=[ToolsPlugin(blocking, echo)],
    )
    aborter = threading.Thread(target=lambda: (blocking.started.wait(5), rig.session.abort()))
    aborter.start()
    rig.session.prompt("go")
    aborter.join()
    assert echo.calls == []  # the batch stops at the aborted call
    assert rig.types()[-16:] == [
        *ANSWER,
        *TOOL_CALL,
        "turn_end",
        "turn_start",
        "context",
        *ANSWER,
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    messages = rig.messages_in_file()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert messages[2]["isError"] is True
    assert messages[3]["stopReason"] == "aborted"
    assert rig.provider.calls == 1  # the aborted turn sent nothing


def test_abort_kills_a_running_bash_command(make_rig):
    rig = make_rig(
        [tool_response("bash", {"command": "sleep 30"})],
        default_plugins=("ctxmodes.tools.builtin:BuiltinToolsPlugin",),
    )

    def abort_when_running(record):
        if isinstance(record, records.ToolCallChecked):
            threading.Timer(0.3, rig.session.abort).start()

    rig.session.subscribe(abort_when_running)
    started = time.monotonic()
    rig.session.prompt("sleep")
    assert time.monotonic() - started < 10
    messages = rig.messages_in_file()
    assert messages[2]["role"] == "toolResult"
    assert messages[-1]["stopReason"] == "aborted"


def test_abort_mid_stream_persists_the_partial_answer(make_rig):
    rig = make_rig([text_response("x" * 200)], chunk_chars=10)

    def abort_on_first_update(record):
        if isinstance(record, records.MessageUpdated):
            rig.session.abort()

    rig.session.subscribe(abort_on_first_update)
    rig.session.prompt("stream")
    answer = rig.messages_in_file()[-1]
    assert answer["stopReason"] == "aborted"
    assert 0 < len(answer["content"][0]["text"]) < 200
    ending = ["message_start", "message_end", "turn_end", "agent_end", "agent_settled"]
    assert rig.types()[-5:] == ending


def test_steering_from_a_tool_is_delivered_before_the_next_request(make_rig):
    def steer(ctx):
        ctx.session.steer("also check the tests")

    rig = make_rig(
        [tool_response("echo", {"text": "a"}), text_response("done")],
        plugins=[ToolsPlugin(EchoTool(on_run=steer))],
    )
    rig.session.prompt("go")
    roles_and_texts = [
        (m["role"], m["content"][0].get("text") if m["content"] else None)
        for m in rig.messages_in_file()
    ]
    assert roles_and_texts[2:4] == [("toolResult", "a"), ("user", "also check the tests")]
    types = rig.types()
    second_turn = types.index("turn_start", types.index("turn_end"))
    # As Pi: the steered message leaves the queue as it starts, said just before it.
    assert types[second_turn : second_turn + 6] == [
        "turn_start",
        "queue_update",
        "message_start",
        "message_end",
        "context",
        "provider_request",
    ]
    updates = rig.of(records.QueueUpdated)
    assert [(u.steering, u.follow_up) for u in updates] == [
        (("also check the tests",), ()),  # queued by the tool
        ((), ()),  # delivered
    ]


def test_follow_up_waits_until_the_run_would_stop(make_rig):
    def follow(ctx):
        ctx.session.follow_up("and then summarize")

    rig = make_rig(
        [tool_response("echo", {"text": "a"}), text_response("first done"), text_response("ok")],
        plugins=[ToolsPlugin(EchoTool(on_run=follow))],
    )
    rig.session.prompt("go")
    messages = rig.messages_in_file()
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[4]["content"][0]["text"] == "and then summarize"
    assert rig.types().count("agent_start") == 1
    assert rig.types().count("agent_settled") == 1


def test_steering_from_another_thread_during_a_tool(make_rig):
    submitted = threading.Event()
    rig = make_rig(
        [tool_response("echo", {"text": "1"}), text_response("done")],
        plugins=[ToolsPlugin(EchoTool(on_run=lambda ctx: submitted.wait(5)))],
    )

    def type_while_running():
        rig.session.submit("look here", streaming_behavior="steer")
        submitted.set()

    # Typed by the user while the tool runs: the run is streaming, so it is queued.
    def on_record(record):
        if isinstance(record, records.ToolCallChecked):
            threading.Thread(target=type_while_running).start()

    rig.session.subscribe(on_record)
    rig.session.prompt("go")
    assert submitted.is_set()
    messages = rig.messages_in_file()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "user", "assistant"]
    assert messages[3]["content"][0]["text"] == "look here"
    assert rig.of(records.InputReceived)[-1].streaming_behavior == "steer"
    assert rig.types().count("agent_settled") == 1


def test_commands_run_at_once_without_a_run(make_rig):
    calls = []

    class Commands:
        @hookimpl
        def ctx_register_commands(self, register, session):
            register(Command("probe", "test", lambda args, ctx: calls.append(args)))

    rig = make_rig([], plugins=[Commands()])
    rig.clear()
    rig.session.submit("/probe some args")
    assert calls == ["some args"]
    assert rig.types() == ["command"]
    assert rig.messages_in_file() == []


def test_commands_run_while_streaming(make_rig):
    calls = []

    class Commands:
        @hookimpl
        def ctx_register_commands(self, register, session):
            def probe(args, ctx):
                calls.append(ctx.session.is_streaming())

            register(Command("probe", "test", probe))

    def type_command(ctx):
        ctx.session.submit("/probe")

    rig = make_rig(
        [tool_response("echo", {"text": "a"}), text_response("done")],
        plugins=[Commands(), ToolsPlugin(EchoTool(on_run=type_command))],
    )
    rig.session.prompt("go")
    assert calls == [True]
    assert rig.types().count("agent_settled") == 1
    assert [m["role"] for m in rig.messages_in_file()].count("user") == 1


def test_handled_and_transformed_input(make_rig):
    class Input:
        @hookimpl
        def ctx_input(self, session, event):
            if event.text == "swallow":
                return InputResult("handled")
            if event.text == "short":
                return InputResult("transform", "a longer prompt")
            return None

    rig = make_rig([text_response("ok")], plugins=[Input()])
    rig.session.submit("swallow")
    assert "agent_start" not in rig.types()
    rig.session.submit("short")
    assert rig.messages_in_file()[0]["content"][0]["text"] == "a longer prompt"
    assert [r.action for r in rig.of(records.InputReceived)] == ["handled", "transform"]
    assert rig.types().count("agent_settled") == 1


def test_model_failure_ends_the_run_with_an_error_message(make_rig):
    rig = make_rig([])  # the script has no response: the model call fails
    rig.session.prompt("hello")
    answer = rig.messages_in_file()[-1]
    assert answer["stopReason"] == "error"
    assert "no response left" in answer["errorMessage"]
    assert rig.types()[-3:] == ["turn_end", "agent_end", "agent_settled"]
    assert isinstance(rig.of(records.AgentEnded)[0].messages[-1], AssistantMessage)


def test_tool_calls_can_be_blocked_and_results_patched(make_rig):
    echo = EchoTool()

    class Guard:
        @hookimpl
        def ctx_tool_call(self, session, event):
            if event.arguments.get("text") == "forbidden":
                return ToolCallBlock("not allowed here")
            return None

        @hookimpl
        def ctx_tool_result(self, session, event):
            if not event.result.is_error:
                patched = event.result.content[0].text.upper()
                event.result = event.result.model_copy(
                    update={"content": [TextContent(text=patched)]}
                )

    rig = make_rig(
        [
            {
                "tool_calls": [
                    {"name": "echo", "arguments": {"text": "forbidden"}},
                    {"name": "echo", "arguments": {"text": "fine"}},
                ]
            },
            text_response("ok"),
        ],
        plugins=[ToolsPlugin(echo), Guard()],
    )
    rig.session.prompt("go")
    results = [m for m in rig.messages_in_file() if m["role"] == "toolResult"]
    assert [(r["content"][0]["text"], r["isError"]) for r in results] == [
        ("not allowed here", True),
        ("FINE", False),
    ]
    assert echo.calls == [{"text": "fine"}]
    assert [r.blocked for r in rig.of(records.ToolCallChecked)] == ["not allowed here", None]


def test_a_failing_plugin_is_reported_and_the_run_goes_on(make_rig, caplog):
    class Broken:
        @hookimpl
        def ctx_turn_start(self, session, turn_index):
            raise RuntimeError("boom")

    caplog.set_level(logging.DEBUG, logger="ctxmodes")
    rig = make_rig([text_response("fine")], plugins=[Broken()])
    rig.session.prompt("hi")
    assert rig.messages_in_file()[-1]["content"][0]["text"] == "fine"
    _assert_reported_in_one_line(rig, caplog, "turn_start: RuntimeError: boom")


def test_a_plugin_failing_while_vetting_a_call_blocks_it_and_is_reported(make_rig, caplog):
    echo = EchoTool()

    class Broken:
        @hookimpl
        def ctx_tool_call(self, session, event):
            raise KeyError("oops")

    caplog.set_level(logging.DEBUG, logger="ctxmodes")
    rig = make_rig(
        [tool_response("echo", {"text": "x"}), text_response("done")],
        plugins=[ToolsPlugin(echo), Broken()],
    )
    rig.session.prompt("go")
    assert echo.calls == []
    _assert_reported_in_one_line(rig, caplog, "tool_call: KeyError: 'oops'")


def test_a_failing_projection_sends_nothing_and_ends_the_turn_with_an_error(make_rig, caplog):
    """Fail closed: the projection decides what the model may see; without it the request
    would carry the whole session."""

    class Broken:
        def __init__(self) -> None:
            self.failing = True

        @hookimpl
        def ctx_project_context(self, session, projection):
            if self.failing:
                raise RuntimeError("window lost")
            projection.messages = projection.messages[-1:]

    broken = Broken()
    caplog.set_level(logging.DEBUG, logger="ctxmodes")
    rig = make_rig([text_response("first"), text_response("second")], plugins=[broken])
    rig.session.prompt("hi")
    assert rig.requests() == []
    reply = rig.messages_in_file()[-1]
    assert (reply["role"], reply["stopReason"]) == ("assistant", "error")
    assert reply["errorMessage"].startswith("Nothing was sent: a plugin failed")
    assert rig.of(records.ContextProjected) == []
    _assert_reported_in_one_line(rig, caplog, "project_context: RuntimeError: window lost")
    broken.failing = False
    rig.session.prompt("again")
    [request] = rig.requests()
    assert [message.role for message in request.messages] == ["user"]
    assert rig.messages_in_file()[-1]["content"][0]["text"] == "first"


def test_a_value_returned_where_the_hook_changes_its_argument_is_reported(make_rig):
    """A newcomer's projection that returns the messages instead of assigning them would
    otherwise do nothing without a word."""

    class Returning:
        @hookimpl
        def ctx_project_context(self, session, projection):
            return projection.messages[-1:]

    rig = make_rig([text_response("fine")], plugins=[Returning()])
    rig.session.prompt("hi")
    assert rig.requests() == []  # the context it meant to cut is not sent whole
    reply = rig.messages_in_file()[-1]
    assert (reply["role"], reply["stopReason"]) == ("assistant", "error")
    assert reply["errorMessage"].startswith("Nothing was sent: a plugin failed")
    assert rig.ui.notifications == [
        (
            "error",
            "plugin error in project_context: PluginError: ctx_project_context returned a "
            "value, which the host ignores: assign projection.messages instead",
        )
    ]


def _assert_reported_in_one_line(rig, caplog, failure: str) -> None:
    """One error line naming the hook, the error and where the plugin raised it; the
    traceback only as a debug record (with no logging configured, a warning or an error
    record reaches standard error through Python's last-resort handler: a traceback over
    the terminal's screen)."""
    [(level, line)] = rig.ui.notifications
    assert level == "error"
    where = r" \(test_event_order\.py, line \d+\)"
    assert re.fullmatch(re.escape(f"plugin error in {failure}") + where, line)
    assert [r.levelno for r in caplog.records if r.exc_info] == [logging.DEBUG]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_hook_errors_can_be_raised_for_plugin_tests(make_rig):
    class Broken:
        @hookimpl
        def ctx_turn_end(self, session, event):
            raise RuntimeError("boom")

    rig = make_rig(
        [text_response("fine")],
        plugins=[Broken()],
        options=HostOptions(raise_hook_errors=True),
    )
    with pytest.raises(RuntimeError, match="boom"):
        rig.session.prompt("hi")
    assert rig.session.is_idle()
    assert rig.types()[-1] == "agent_settled"
