"""The embedding API over the real host: blocking and non-blocking input, the events a
program receives, queueing during a tool call, abort giving queued text back, and the
context state a footer shows."""

from __future__ import annotations

import base64
import threading
from typing import Any

import orjson
import pytest
from support.agents import make_agent
from support.images import dot_gif, solid_png
from support.terminal import GateTool

from ctxmodes.config import Settings
from ctxmodes.errors import CtxmodesError
from ctxmodes.host.records import SessionInfoChanged
from ctxmodes.sdk import (
    Agent,
    AgentEvent,
    Notice,
    QueueChanged,
    RunSettled,
    RunStarted,
    TextDeltaEvent,
    ToolFinished,
    ToolStarted,
    UsageReported,
    open_agent,
)
from ctxmodes.session import ImageContent

WAIT = 10.0


def file_messages(agent: Agent) -> list[dict[str, Any]]:
    path = agent.session_file
    assert path is not None
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    return [entry["message"] for entry in entries if entry["type"] == "message"]


def texts(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def test_prompt_streams_text_and_reports_usage(tmp_path):
    with make_agent(tmp_path, [{"text": "Hello there, friend."}]) as agent:
        events: list[AgentEvent] = []
        agent.subscribe(events.append)
        agent.prompt("hi")
    deltas = [event.text for event in events if isinstance(event, TextDeltaEvent)]
    assert len(deltas) > 1
    assert "".join(deltas) == "Hello there, friend."
    usage = [event for event in events if isinstance(event, UsageReported)]
    assert len(usage) == 1
    assert usage[0].context_tokens > 0
    assert isinstance(events[-1], RunSettled)


def test_submit_returns_at_once_and_runs_on_the_worker(tmp_path):
    gate = GateTool()
    responses = [{"tool_calls": [{"name": "gate"}]}, {"text": "done"}]
    with make_agent(tmp_path, responses, gate) as agent:
        threads: list[str] = []
        agent.subscribe(
            lambda event: (
                threads.append(threading.current_thread().name)
                if isinstance(event, RunStarted)
                else None
            )
        )
        agent.submit("go")
        # The run is blocked in the tool, yet submit returned.
        assert gate.entered.wait(WAIT)
        assert agent.is_streaming()
        gate.opened.set()
        assert agent.wait_for_idle(WAIT)
    assert threads == ["ctxmodes-session"]


def test_text_typed_during_a_tool_call_steers_the_next_request(tmp_path):
    gate = GateTool()
    responses = [{"tool_calls": [{"name": "gate"}]}, {"text": "steered"}, {"text": "followed"}]
    with make_agent(tmp_path, responses, gate) as agent:
        queues: list[QueueChanged] = []
        agent.subscribe(lambda e: queues.append(e) if isinstance(e, QueueChanged) else None)
        agent.submit("start")
        assert gate.entered.wait(WAIT)
        agent.submit("use the other branch")
        agent.submit("then write tests", streaming_behavior="follow_up")
        assert queues[-1] == QueueChanged(("use the other branch",), ("then write tests",))
        gate.opened.set()
        assert agent.wait_for_idle(WAIT)
        messages = file_messages(agent)
    assert [(m["role"], texts(m)) for m in messages] == [
        ("user", "start"),
        ("assistant", ""),
        ("toolResult", "gate passed"),
        ("user", "use the other branch"),
        ("assistant", "steered"),
        ("user", "then write tests"),
        ("assistant", "followed"),
    ]


def test_images_go_with_prompts_submitted_steered_and_followed_up(tmp_path):
    pixel = base64.b64encode(solid_png(1, 1, (1, 2, 3))).decode()
    png = ImageContent(mime_type="image/png", data=pixel)
    gif = ImageContent(mime_type="image/gif", data=base64.b64encode(dot_gif()).decode())
    gate = GateTool()
    responses = [{"text": "one"}, {"tool_calls": [{"name": "gate"}]}]
    responses += [{"text": "steered"}, {"text": "followed"}]
    with make_agent(tmp_path, responses, gate) as agent:
        agent.prompt("first", images=[png])
        agent.submit("second", images=[gif, png])
        assert gate.entered.wait(WAIT)
        agent.steer("steer", images=[gif])
        agent.follow_up("follow")
        gate.opened.set()
        assert agent.wait_for_idle(WAIT)
        messages = file_messages(agent)

    def image(block: ImageContent) -> dict[str, str]:
        return {"type": "image", "mimeType": block.mime_type, "data": block.data}

    assert [m["content"][1:] for m in messages if m["role"] == "user"] == [
        [image(png)],
        [image(gif), image(png)],
        [image(gif)],
        [],
    ]


def test_abort_gives_queued_text_back_and_sends_nothing(tmp_path):
    gate = GateTool()
    responses = [{"tool_calls": [{"name": "gate"}]}, {"text": "never"}]
    with make_agent(tmp_path, responses, gate) as agent:
        agent.submit("start")
        assert gate.entered.wait(WAIT)
        agent.submit("steer me")
        agent.submit("follow me", streaming_behavior="follow_up")
        assert agent.abort() == ["steer me", "follow me"]
        assert agent.wait_for_idle(WAIT)
        assert agent.take_queued() == ([], [])
        messages = file_messages(agent)
    sent = [texts(m) for m in messages if m["role"] == "user"]
    assert sent == ["start"]
    # As Pi: the aborted tool's result, then the aborted reply that ends the run.
    assert [(m["role"], m.get("stopReason")) for m in messages[1:]] == [
        ("assistant", "toolUse"),
        ("toolResult", None),
        ("assistant", "aborted"),
    ]


def test_tool_events_and_failed_commands_become_events(tmp_path):
    responses = [{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, {}]
    with make_agent(tmp_path, responses) as agent:
        events: list[AgentEvent] = []
        agent.subscribe(events.append)
        agent.prompt("run it")
        agent.prompt("/tree no-such-entry")
    started = [e for e in events if isinstance(e, ToolStarted)]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.name, e.arguments) for e in started] == [("bash", {"command": "echo hi"})]
    assert finished[0].text.strip() == "hi"
    assert not finished[0].is_error
    errors = [e for e in events if isinstance(e, Notice) and e.level == "error"]
    assert errors
    assert errors[0].message.startswith("/tree:")


def test_context_state_counts_usable_tokens_left(tmp_path):
    usage = {"totalTokens": 40_000}
    with make_agent(tmp_path, [{"text": "ok", "usage": usage}]) as agent:
        before = agent.context_state()
        agent.prompt("hi")
        after = agent.context_state()
    assert before.used_tokens is None
    assert after.usable_tokens == 128_000 - 16_384
    assert after.tokens_left == 128_000 - 16_384 - 40_000
    assert after.fraction_used == pytest.approx(40_000 / (128_000 - 16_384))


def test_naming_the_session_writes_session_info(tmp_path):
    with make_agent(tmp_path, [{"text": "ok"}]) as agent:
        named: list[object] = []
        agent.subscribe_records(named.append)
        agent.prompt("hi")
        # Trimmed as JavaScript trims: U+FEFF is whitespace there, U+001F is not.
        agent.set_name("\ufeff release prep\x1f ")
        assert agent.session_manager.get_session_name() == "release prep\x1f"
        with pytest.raises(CtxmodesError, match=r"^Session name cannot be empty$"):
            agent.set_name(" \ufeff ")
    assert [record for record in named if record.type == "session_info_changed"] == [
        SessionInfoChanged("release prep\x1f")
    ]


def test_a_name_given_during_a_run_is_written_by_the_run_before_its_next_request(tmp_path):
    gate = GateTool()
    responses = [{"tool_calls": [{"name": "gate"}]}, {"text": "done"}]
    with make_agent(tmp_path, responses, gate) as agent:
        agent.submit("go")
        assert gate.entered.wait(WAIT)
        agent.set_name("mid-run")
        # The run holds the session file: nothing is written while its tool runs.
        assert agent.session_manager.get_session_name() is None
        gate.opened.set()
        assert agent.wait_for_idle(WAIT)
        kinds = [entry.type for entry in agent.session_manager.get_entries()]
        assert agent.session_manager.get_session_name() == "mid-run"
        agent.set_name("after the run")
        assert agent.session_manager.get_session_name() == "after the run"
    # After the tool's result, before the answer its next request brought.
    at = kinds.index("session_info")
    assert kinds[at - 1 : at + 2] == ["message", "session_info", "message"]


def test_an_unknown_directory_is_one_clear_error(tmp_path):
    with pytest.raises(CtxmodesError, match="no such directory"):
        open_agent(cwd=tmp_path / "missing", settings=Settings())


def test_a_failing_listener_keeps_no_event_from_the_others(tmp_path, caplog):
    def broken(event: AgentEvent) -> None:
        raise RuntimeError("the program's listener is broken")

    with make_agent(tmp_path, [{"text": "Still answered."}]) as agent:
        events: list[AgentEvent] = []
        agent.subscribe(broken)
        agent.subscribe(events.append)
        agent.prompt("hi")
    assert isinstance(events[0], RunStarted)
    assert isinstance(events[-1], RunSettled)
    assert "".join(e.text for e in events if isinstance(e, TextDeltaEvent)) == "Still answered."
    failures = [r for r in caplog.records if r.name == "ctxmodes.sdk.agent"]
    assert len(failures) == len(events)
    assert "the program's listener is broken" in failures[0].exc_text


@pytest.mark.parametrize(
    ("plugins", "mode", "why"),
    [
        ({"block": ["tree"]}, None, "plugin 'tree' is blocked: remove it from plugins.block"),
        ({"allow": ["local"]}, "tree", "plugin 'tree' is not allowed: the allow list"),
    ],
)
def test_opening_an_agent_in_a_mode_whose_plugin_is_not_loaded_says_why(
    tmp_path, plugins, mode, why
):
    settings = Settings.model_validate({"mode": "tree", "plugins": plugins})
    with pytest.raises(CtxmodesError) as caught:
        open_agent(cwd=tmp_path, settings=settings, mode=mode, session_dir=tmp_path / "s")
    assert str(caught.value).startswith(f"no loaded plugin provides mode 'tree'; {why}")
    assert not (tmp_path / "s").exists() or not list((tmp_path / "s").iterdir())


def test_a_session_not_persisted_writes_no_file_nor_do_its_new_sessions(tmp_path):
    from ctxmodes.providers.script import Script
    from ctxmodes.providers.scripted import ScriptedProvider

    script = Script.model_validate({"responses": [{"text": "one"}, {"text": "two"}]})
    sessions = tmp_path / "sessions"
    with open_agent(
        cwd=tmp_path,
        settings=Settings(),
        provider=ScriptedProvider(script),
        session_dir=sessions,
        persist=False,
    ) as agent:
        agent.prompt("hi")
        assert agent.session_file is None
        assert [m.role for m in agent.session.messages] == ["user", "assistant"]
        agent.new_session()
        agent.prompt("again")
        assert agent.session_file is None
    assert not sessions.exists() or not list(sessions.rglob("*.jsonl"))
    with pytest.raises(CtxmodesError, match="kept in memory"):
        open_agent(cwd=tmp_path, settings=Settings(), continue_recent=True, persist=False)


def test_a_shell_command_streams_and_is_stopped_from_another_thread(tmp_path):
    with make_agent(tmp_path, []) as agent:
        started = threading.Event()
        pieces: list[str] = []

        def seen(piece: str) -> None:
            pieces.append(piece)
            started.set()

        done: list[Any] = []
        worker = threading.Thread(
            target=lambda: done.append(
                agent.run_shell_command("echo begun; sleep 20", on_output=seen)
            )
        )
        worker.start()
        assert started.wait(10)
        agent.abort_shell_commands()
        worker.join(30)
        assert pieces == ["begun\n"]
        assert (done[0].output, done[0].exit_code, done[0].cancelled) == ("begun\n", None, True)
        [recorded] = [m for m in file_messages(agent) if m["role"] == "bashExecution"]
        assert (recorded["cancelled"], recorded["excludeFromContext"]) == (True, False)
