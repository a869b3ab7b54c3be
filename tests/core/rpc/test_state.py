"""Pi's RPC mode, state, models, thinking, queue modes, automatic compaction and retry:
``ctxmodes --mode rpc`` and the real ``pi --mode rpc`` get the same commands against the same
loopback model and write the same lines, byte for byte in key order, where Pi's answer is
one a client can rely on. Where ctxmodes answers otherwise on purpose (bad values, a model
or level switch during a run), both answers are checked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from support.pi_events import normalised_events
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, text_stream, tool_call_stream

from ctxmodes.session_mode import MODE_ENTRY_TYPE

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

JsonObject = dict[str, Any]
Script = Callable[[RpcProcess, WireServer], None]
#: A key for Anthropic's built-in models (nothing is sent to Anthropic).
ANTHROPIC = {"ANTHROPIC_API_KEY": "sk-ant-loopback"}
#: Lines a command writes, which may fall among the lines of an answer.
ASIDE = ("response", "queue_update")
_SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _comparable(lines: list[JsonObject], where: Path, base_url: str) -> list[JsonObject]:
    """``lines`` with what differs between two programs' runs made equal: the loopback
    model's address (each program has its own server), the new session's id and file (each
    has its own agent directory; checked to be a file of that session there), and the
    timestamps of the commands' lines."""

    def replaced(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(base_url, "<loopback>")
        if isinstance(value, list):
            return [replaced(item) for item in value]
        if isinstance(value, dict):
            return {key: replaced(item) for key, item in value.items()}
        return value

    result = []
    for line in lines:
        data = line.get("data")
        if line.get("command") == "get_state" and isinstance(data, dict):
            assert _SESSION_ID.match(data["sessionId"])
            if "sessionFile" in data:
                file = Path(data["sessionFile"])
                assert file.is_relative_to(where)
                assert file.name.endswith(f"_{data['sessionId']}.jsonl")
                data = {**data, "sessionFile": "<session file>"}
            line = {**line, "data": {**data, "sessionId": "<session id>"}}
        result.append(replaced(line))
    # A command's lines are made comparable one by one; a run's events only as one stream
    # (see _run_events).
    return [normalised_events([line])[0] if line["type"] in ASIDE else line for line in result]


def _run_events(lines: list[JsonObject]) -> list[JsonObject]:
    """The events of the runs in ``lines``, normalised as one stream (see
    :func:`~support.pi_events.normalised_events`), without the lines commands wrote among
    them (where those fall among an answer's updates is a race)."""
    return normalised_events([line for line in lines if line["type"] not in ASIDE])


def _both(
    tmp_path: Path,
    replies: Sequence[Reply],
    script: Script,
    argv: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> tuple[list[JsonObject], list[JsonObject]]:
    """What Pi, then ctxmodes, wrote while ``script(process, server)`` drove each, made
    comparable."""
    written = []
    for start, where in ((pi_rpc, tmp_path / "pi"), (our_rpc, tmp_path / "ours")):
        where.mkdir()
        (where / "note.txt").write_text("hello note\n")
        with WireServer(list(replies)) as server:
            with start(where, server.base_url, argv, env=env) as process:
                script(process, server)
                assert process.close() == 0
            written.append(_comparable(process.lines, where, server.base_url))
    return written[0], written[1]


def _same(theirs: list[JsonObject], ours: list[JsonObject]) -> None:
    """The same lines, keys in the same order."""
    assert [json.dumps(line) for line in ours] == [json.dumps(line) for line in theirs]


def _from_second_turn(lines: list[JsonObject]) -> list[JsonObject]:
    """The lines from the run's second ``turn_start`` on, normalised as one stream."""
    starts = [at for at, line in enumerate(lines) if line["type"] == "turn_start"]
    return normalised_events(lines[starts[1] :])


def _requests(*commands: JsonObject) -> Script:
    def script(process: RpcProcess, server: WireServer) -> None:
        for command in commands:
            process.request(command)

    return script


def _responses(lines: list[JsonObject]) -> list[JsonObject]:
    return [line for line in lines if line["type"] == "response"]


def _response(lines: list[JsonObject], command: str, index: int = 0) -> JsonObject:
    return [line for line in lines if line.get("command") == command][index]


@pytest.mark.pi
@pytest.mark.parametrize(
    "argv", [[], ["--no-session"], ["--name", "state work"]], ids=["file", "memory", "named"]
)
def test_a_new_sessions_state_models_and_settings_are_pis(tmp_path: Path, argv: list[str]) -> None:
    script = _requests(
        {"type": "get_state"},
        {"type": "get_available_models"},
        {"type": "get_available_thinking_levels"},
        {"type": "cycle_model"},
        {"type": "cycle_thinking_level"},
        {"type": "set_thinking_level", "level": "high"},
        {"type": "set_model", "provider": "loop", "modelId": "m"},
        {"type": "set_model", "provider": "loop", "modelId": "nope"},
        {"type": "set_steering_mode", "mode": "all"},
        {"type": "set_follow_up_mode", "mode": "all"},
        {"type": "set_auto_compaction", "enabled": False},
        {"type": "set_auto_retry", "enabled": False},
        {"type": "get_messages"},
        {"type": "get_state"},
    )
    theirs, ours = _both(tmp_path, [], script, argv)
    _same(theirs, ours)
    first, last = _response(ours, "get_state")["data"], _response(ours, "get_state", 1)["data"]
    assert ("sessionFile" in first) is (argv != ["--no-session"])
    assert first.get("sessionName") == ("state work" if "--name" in argv else None)
    assert (first["model"]["provider"], first["model"]["id"]) == ("loop", "m")
    # A model that does not think: one level, nothing to cycle, "high" taken as "off".
    assert (first["thinkingLevel"], last["thinkingLevel"]) == ("off", "off")
    assert _response(ours, "set_model", 1)["error"] == "Model not found: loop/nope"
    changed = ("steeringMode", "followUpMode", "autoCompactionEnabled")
    assert [last[key] for key in changed] == ["all", "all", False]
    # Both save the four settings in Pi's settings.json, to the byte.
    saved = (tmp_path / "pi" / "pi-agent" / "settings.json").read_bytes()
    assert json.loads(saved) == {
        "steeringMode": "all",
        "followUpMode": "all",
        "compaction": {"enabled": False},
        "retry": {"enabled": False},
    }
    assert (tmp_path / "ours" / "agent" / "settings.json").read_bytes() == saved


@pytest.mark.pi
@pytest.mark.parametrize(
    "argv",
    [["--models", "anthropic/claude-sonnet-4-5:low,anthropic/claude-haiku-4-5"], []],
    ids=["scope", "every-model"],
)
def test_models_and_levels_cycle_as_pis(tmp_path: Path, argv: list[str]) -> None:
    script = _requests(
        {"type": "get_available_models"},
        {"type": "cycle_model"},
        {"type": "get_available_thinking_levels"},
        {"type": "cycle_thinking_level"},
        {"type": "cycle_thinking_level"},
        {"type": "set_thinking_level", "level": "xhigh"},
        {"type": "get_state"},
        {"type": "cycle_model"},
        {"type": "cycle_model"},
        {"type": "set_model", "provider": "anthropic", "modelId": "claude-opus-4-5"},
        {"type": "set_model", "provider": "openai", "modelId": "gpt-4o"},
        {"type": "get_available_thinking_levels"},
        {"type": "get_state"},
    )
    theirs, ours = _both(tmp_path, [], script, argv, env=ANTHROPIC)
    _same(theirs, ours)
    models = _response(ours, "get_available_models")["data"]["models"]
    assert {model["provider"] for model in models} == {"anthropic", "loop"}
    assert _response(ours, "cycle_model")["data"]["isScoped"] is bool(argv)
    # Each level change is said just before the response of the command that made it.
    said = [at for at, line in enumerate(ours) if line["type"] == "thinking_level_changed"]
    assert said
    assert all(ours[at + 1]["type"] == "response" for at in said)
    # No key of any kind in what was written.
    assert "sk-" not in json.dumps(ours)
    # No model without credentials: OpenAI has no key here.
    assert _response(ours, "set_model", 1)["error"] == "Model not found: openai/gpt-4o"


def _run_then_ask(process: RpcProcess, server: WireServer) -> None:
    process.send({"id": "p", "type": "prompt", "message": "What does note.txt say?"})
    process.wait_for_event("agent_settled")
    process.request({"type": "get_messages"})
    process.request({"type": "get_state"})


@pytest.mark.pi
def test_messages_and_state_after_a_run_are_pis(tmp_path: Path) -> None:
    replies = [
        Reply(tool_call_stream(API, "read", json.dumps({"path": "note.txt"}))),
        Reply(text_stream(API, "It says hello.")),
    ]
    theirs, ours = _both(tmp_path, replies, _run_then_ask)
    asked = [line for line in ours if line["type"] == "response" and line["id"] != "p"]
    expected = [line for line in theirs if line["type"] == "response" and line["id"] != "p"]
    _same(expected, asked)
    messages = _response(ours, "get_messages")["data"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert _response(ours, "get_state")["data"]["messageCount"] == 4


def _queued_while_answering(process: RpcProcess, server: WireServer) -> None:
    process.request({"type": "prompt", "message": "first"})
    assert server.arrived.wait(30)
    process.request({"type": "steer", "message": "steered"})
    process.request({"type": "follow_up", "message": "later"})
    process.request({"type": "get_state"})
    server.release.set()
    process.wait_for(lambda line: line.get("type") == "agent_end" and "later" in json.dumps(line))
    process.wait_for_event("agent_settled")
    process.request({"type": "get_state"})


@pytest.mark.pi
def test_state_while_the_agent_works_counts_the_queued_messages_as_pi(tmp_path: Path) -> None:
    replies = [
        Reply(text_stream(API, "Answer one"), behaviour="pause", cut_after=1),
        Reply(text_stream(API, "Answer two")),
        Reply(text_stream(API, "Answer three")),
    ]
    theirs, ours = _both(tmp_path, replies, _queued_while_answering)
    _same(
        [line for line in theirs if line.get("command") == "get_state"],
        [line for line in ours if line.get("command") == "get_state"],
    )
    during, after = (_response(ours, "get_state", at)["data"] for at in (0, 1))
    assert (during["isStreaming"], during["pendingMessageCount"]) == (True, 2)
    assert (after["isStreaming"], after["pendingMessageCount"]) == (False, 0)
    assert after["messageCount"] == 6


def _queued_with_modes_all(process: RpcProcess, server: WireServer) -> None:
    process.request({"type": "set_steering_mode", "mode": "all"})
    process.request({"type": "set_follow_up_mode", "mode": "all"})
    process.request({"type": "prompt", "message": "first"})
    assert server.arrived.wait(30)
    for queued in ("steer", "follow_up"):
        for text in ("one", "two"):
            process.request({"type": queued, "message": f"{queued} {text}"})
    server.release.set()
    process.wait_for_event("agent_settled")


@pytest.mark.pi
def test_queue_modes_set_to_all_deliver_each_queue_at_once_as_pi(tmp_path: Path) -> None:
    replies = [
        Reply(text_stream(API, "Answer one"), behaviour="pause", cut_after=1),
        Reply(text_stream(API, "Answer two")),
        Reply(text_stream(API, "Answer three")),
    ]
    theirs, ours = _both(tmp_path, replies, _queued_with_modes_all)
    # The responses, and the run's events apart from them (a command sent while the model
    # answers is a race with the answer's first event).
    _same(_responses(theirs), _responses(ours))
    expected, got = _run_events(theirs), _run_events(ours)
    assert [line["type"] for line in got] == [line["type"] for line in expected]
    _same(expected, got)
    # Every command was answered before the first answer ended: from the second turn on,
    # every line is the run's, queue updates included. Each queued message leaves the
    # queues as it starts.
    delivered = [_from_second_turn(lines) for lines in (theirs, ours)]
    _same(*delivered)
    updates = [line for line in delivered[1] if line["type"] == "queue_update"]
    assert [(line["steering"], line["followUp"]) for line in updates] == [
        (["steer two"], ["follow_up one", "follow_up two"]),
        ([], ["follow_up one", "follow_up two"]),
        ([], ["follow_up two"]),
        ([], []),
    ]
    # Three answers: the prompt, both steered messages together, both follow-ups together.
    users = [
        line["message"]["content"][0]["text"]
        for line in ours
        if line["type"] == "message_end" and line["message"]["role"] == "user"
    ]
    assert users == ["first", "steer one", "steer two", "follow_up one", "follow_up two"]
    assert sum(line["type"] == "turn_start" for line in ours) == 3


#: A prompt of about 25,000 tokens (Pi estimates four characters a token): two of them are
#: more than a compaction keeps (20,000 tokens), so the first one is summarized.
_BIG = "word " * 20_000


def _filling_the_window() -> list[Reply]:
    """Two answers, a third one whose usage fills the loopback model's window past Pi's
    threshold (128,000 tokens less the 16,384 kept free), then a summary that takes its time."""
    full = text_stream(API, "Answer three")
    usage = {"prompt_tokens": 120_000, "completion_tokens": 2}
    full[-2] = (
        b"data: " + json.dumps({"id": "c1", "choices": [], "usage": usage}).encode() + b"\n\n"
    )
    return [
        Reply(text_stream(API, "Answer one")),
        Reply(text_stream(API, "Answer two")),
        Reply(full),
        Reply(text_stream(API, "The summary."), behaviour="pause", cut_after=1),
    ]


#: What the compaction test asks once the session settled.
ASKED = ("get_state", "get_messages")


def _compacting(enabled: bool) -> Script:
    def script(process: RpcProcess, server: WireServer) -> None:
        process.request({"type": "set_auto_compaction", "enabled": enabled})
        for text in (_BIG, _BIG):
            process.request({"type": "prompt", "message": text})
            process.wait_for_event("agent_settled")
        process.request({"type": "prompt", "message": "a short one"})
        if enabled:
            process.wait_for_event("compaction_start")
            process.request({"type": "get_state"})
            server.release.set()
        process.wait_for_event("agent_settled")
        process.request({"type": "get_state"})
        process.request({"type": "get_messages"})

    return script


@pytest.mark.pi
@pytest.mark.parametrize("enabled", [True, False], ids=["on", "off"])
def test_automatic_compaction_runs_as_set_and_is_reported_as_in_pi(
    tmp_path: Path, enabled: bool
) -> None:
    theirs, ours = _both(tmp_path, _filling_the_window(), _compacting(enabled))
    _same(
        [line for line in theirs if line.get("command") in ASKED],
        [line for line in ours if line.get("command") in ASKED],
    )
    compactions = [line["type"] for line in ours if line["type"].startswith("compaction")]
    assert compactions == [line["type"] for line in theirs if line["type"].startswith("compaction")]
    assert compactions == (["compaction_start", "compaction_end"] if enabled else [])
    states = [line["data"] for line in ours if line.get("command") == "get_state"]
    # After a compaction the context starts with its summary.
    messages = _response(ours, "get_messages")["data"]["messages"]
    assert (messages[0]["role"] == "compactionSummary") is enabled
    # During the summary the run is still going on (Pi's post-run handling), then neither.
    activity = [(state["isStreaming"], state["isCompacting"]) for state in states]
    assert activity == ([(True, True), (False, False)] if enabled else [(False, False)])


def _failing_once(process: RpcProcess, server: WireServer) -> None:
    process.request({"type": "set_auto_retry", "enabled": False})
    process.request({"type": "prompt", "message": "first"})
    process.wait_for_event("agent_settled")
    process.request({"type": "get_messages"})


@pytest.mark.pi
def test_a_transient_failure_is_not_retried_once_retry_is_off_as_in_pi(tmp_path: Path) -> None:
    replies = [Reply(status=503, chunks=[b'{"error": {"message": "overloaded"}}'])]
    theirs, ours = _both(tmp_path, replies, _failing_once)
    assert _responses(ours) == _responses(theirs)
    expected, got = _run_events(theirs), _run_events(ours)
    assert [line["type"] for line in got] == [line["type"] for line in expected]
    assert not [line for line in got if line["type"].startswith("auto_retry")]
    ended = next(line for line in got if line["type"] == "agent_end")
    assert ended["willRetry"] is False
    assert ended == next(line for line in expected if line["type"] == "agent_end")


def test_values_that_are_none_of_pis_are_refused_and_change_nothing(tmp_path: Path) -> None:
    # Pi takes any value and stores it (a get_state then lacks the steering mode); ctxmodes
    # refuses it, and the state stays as it was.
    refused = [
        ({"type": "set_thinking_level", "level": "bogus"}, "unknown thinking level 'bogus'"),
        ({"type": "set_thinking_level"}, 'set_thinking_level needs a string "level"'),
        ({"type": "set_model", "modelId": "m"}, 'set_model needs a string "provider"'),
        ({"type": "set_model", "provider": "loop"}, 'set_model needs a string "modelId"'),
        ({"type": "set_steering_mode", "mode": "weird"}, '"mode" must be "all" or "one-at-a-time"'),
        ({"type": "set_follow_up_mode"}, '"mode" must be "all" or "one-at-a-time"'),
        ({"type": "set_auto_compaction", "enabled": "yes"}, '"enabled" must be true or false'),
        ({"type": "set_auto_retry"}, '"enabled" must be true or false'),
    ]
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        before = process.request({"type": "get_state"})["data"]
        for command, error in refused:
            response = process.request(command)
            assert (response["success"], response["command"]) == (False, command["type"])
            assert response["error"].startswith(error)
        after = process.request({"type": "get_state"})["data"]
        assert process.close() == 0
    assert after == before
    assert all(line["type"] == "response" for line in process.lines)


def test_a_setting_that_cannot_be_saved_is_taken_and_said_on_standard_error(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "agent" / "settings.json"
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        process.request({"type": "get_state"})
        settings.parent.mkdir(exist_ok=True)
        settings.write_text('{"theme": "dark",')  # broken after the start
        response = process.request({"type": "set_auto_compaction", "enabled": False})
        state = process.request({"type": "get_state"})["data"]
        assert process.close() == 0
        errors = process.stderr()
    assert response["success"] is True
    assert state["autoCompactionEnabled"] is False
    assert (
        f"ctxmodes: warning: Not saved for the next start: cannot save {settings}: "
        "it is not valid JSON"
    ) in errors
    assert settings.read_text() == '{"theme": "dark",'


#: A second loopback model, one that reasons.
REASONING = {"id": "r", "reasoning": True}
SWITCHES = ("model_change", "thinking_level_change")


def _entries(lines: list[JsonObject]) -> list[JsonObject]:
    """The entries of the session file the last ``get_state`` in ``lines`` names, without
    ctxmodes' record of the session's mode (Pi has no modes)."""
    state = [line["data"] for line in lines if line.get("command") == "get_state"][-1]
    text = Path(state["sessionFile"]).read_text()
    entries = [json.loads(line) for line in text.splitlines()[1:]]
    return [entry for entry in entries if entry.get("customType") != MODE_ENTRY_TYPE]


def _shape(entry: JsonObject) -> tuple[str, ...]:
    if entry["type"] == "message":
        message = entry["message"]
        return ("message", message["role"], message.get("model", ""))
    if entry["type"] == "model_change":
        return ("model_change", entry["modelId"])
    if entry["type"] == "thinking_level_change":
        return ("thinking_level_change", entry["thinkingLevel"])
    return (entry["type"],)


@pytest.mark.pi
def test_a_model_and_level_switched_during_a_run_serve_its_next_request_as_in_pi(
    tmp_path: Path,
) -> None:
    replies = [
        Reply(
            tool_call_stream(API, "read", json.dumps({"path": "note.txt"})),
            behaviour="pause",
            cut_after=1,
        ),
        Reply(text_stream(API, "It says hello.")),
    ]
    runs = {}
    for start, name in ((pi_rpc, "pi"), (our_rpc, "ours")):
        where = tmp_path / name
        where.mkdir()
        (where / "note.txt").write_text("hello note\n")
        with WireServer(list(replies)) as server:
            with start(where, server.base_url, more_models=[REASONING]) as process:
                process.request({"type": "prompt", "message": "What does note.txt say?"})
                assert server.arrived.wait(30)
                switched = process.request(
                    {"type": "set_model", "provider": "loop", "modelId": "r"}
                )
                process.request({"type": "set_thinking_level", "level": "high"})
                during = process.request({"type": "get_state"})["data"]
                server.release.set()
                process.wait_for_event("agent_settled")
                process.request({"type": "get_state"})
                assert process.close() == 0
            bodies = [json.loads(request["body"]) for request in server.requests]
        assert all(line["success"] for line in process.lines if line["type"] == "response")
        assert switched["data"]["id"] == "r"
        runs[name] = (
            [(body["model"], body.get("reasoning_effort")) for body in bodies],
            (during["model"]["id"], during["thinkingLevel"]),
            [_shape(entry) for entry in _entries(process.lines)],
        )
    (pi_sent, pi_during, pi_file), (sent, during_ours, ours) = runs["pi"], runs["ours"]
    # The answer under way finishes on the first model; the run's next request, the one
    # after the tool's result, goes to the new model at the new level.
    assert sent == pi_sent
    assert [model for model, _ in sent] == ["m", "r"]
    assert sent[1][1] is not None
    assert during_ours == pi_during == ("r", "high")
    # Pi writes the switch as it is made, among the answer's entries; ctxmodes, whose run
    # holds the file, just before the request that uses it: the same entries otherwise.
    user = pi_file.index(("message", "user", ""))
    made = [at for at, shape in enumerate(pi_file) if at > user and shape[0] in SWITCHES]
    moved = [shape for at, shape in enumerate(pi_file) if at not in made]
    last = len(moved) - 1
    assert ours == moved[:last] + [pi_file[at] for at in made] + moved[last:]
    assert ours[-1] == ("message", "assistant", "r")


def test_a_model_outside_the_catalog_is_told_by_what_ctxmodes_knows(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"model": "scripted-m", "responses": [], "reasoning": True}))
    # The configured loopback model is not used: no server answers for it.
    with our_rpc(tmp_path, "http://127.0.0.1:9", ["--model", f"scripted:{script}"]) as process:
        state = process.request({"type": "get_state"})["data"]
        levels = process.request({"type": "get_available_thinking_levels"})["data"]
        assert process.close() == 0
    assert state["model"] == {
        "id": "scripted-m",
        "name": "scripted-m",
        "api": "scripted",
        "provider": "scripted",
        "reasoning": True,
        "input": ["text", "image"],
        "contextWindow": 128000,
        "maxTokens": 16384,
    }
    assert levels == {"levels": ["off", "minimal", "low", "medium", "high"]}
