"""Pi's RPC ``compact``, ``abort_retry`` and ``get_session_stats``: ``ctxmodes --mode rpc``
and the real ``pi --mode rpc`` resume copies of one session file (or start alike), get the
same commands against the same loopback model, and answer and stream alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.pi_events import normalised_events
from support.pi_print import API
from support.rpc_client import RpcProcess, our_rpc, pi_rpc
from support.wire_server import Reply, WireServer, json_error, text_stream

pytestmark = pytest.mark.slow  # RPC mode as a process, end to end

JsonObject = dict[str, Any]
Script = Callable[[RpcProcess, WireServer], Any]


def _usage(read: int, written: int, cached: int, cost: float) -> JsonObject:
    return {
        "input": read,
        "output": written,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": read + written + cached,
        "cost": {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def _assistant(content: list[JsonObject], usage: JsonObject, stop: str = "stop") -> JsonObject:
    return {
        "role": "assistant",
        "content": content,
        "api": API,
        "provider": "loop",
        "model": "m",
        "usage": usage,
        "stopReason": stop,
        "timestamp": 1_767_225_600_000,
    }


def _answer(text: str, usage: JsonObject) -> JsonObject:
    return _assistant([{"type": "text", "text": text}], usage)


def _user(text: str) -> JsonObject:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


#: A session with a tool call, two branches (the leaf on the second) and costs.
MESSAGES: list[tuple[str, str | None, JsonObject]] = [
    ("e1", None, _user("What does note.txt say? " * 20)),
    (
        "e2",
        "e1",
        _assistant(
            [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "note.txt"}}],
            _usage(300, 20, 0, 0.0015),
            "toolUse",
        ),
    ),
    (
        "e3",
        "e2",
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "hello note\n" * 30}],
            "isError": False,
            "timestamp": 2,
        },
    ),
    ("e4", "e3", _answer("It says hello. " * 30, _usage(420, 60, 80, 0.0021))),
    ("e5", "e4", _user("And then? " * 30)),
    ("e6", "e5", _answer("Nothing. " * 40, _usage(600, 50, 0, 0.003))),
    ("e7", "e4", _user("Another question " * 30)),
    ("e8", "e7", _answer("Another answer " * 40, _usage(700, 80, 120, 0.004))),
]

COMPACTION: JsonObject = {
    "type": "compaction",
    "id": "e9",
    "parentId": "e8",
    "timestamp": "2026-01-01T00:00:09.000Z",
    "summary": "Earlier: a note was read.",
    "firstKeptEntryId": "e7",
    "tokensBefore": 1500,
    "details": {"readFiles": ["note.txt"], "modifiedFiles": []},
    "usage": _usage(900, 40, 0, 0.0042),
    "fromHook": False,
}


def _write_session(where: Path, *, compacted: bool) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": "019b7a00-0000-7000-8000-000000000001",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(where),
    }
    lines = [header]
    for at, (entry_id, parent, message) in enumerate(MESSAGES, start=1):
        stamp = f"2026-01-01T00:00:0{at}.000Z"
        lines.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": stamp,
                "message": message,
            }
        )
    if compacted:
        lines.append(COMPACTION)
    path = where / "work.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


def _both(
    tmp_path: Path,
    script: Script,
    replies: list[Reply],
    *,
    session: bool | None = None,
    settings: JsonObject | None = None,
    options: tuple[str, ...] = (),
) -> list[tuple[Any, RpcProcess, WireServer]]:
    """What ``script`` returned for Pi, then for ctxmodes, with each process (ended) and
    its model server. ``session``: resume a copy of the session file (True: compacted);
    ``options``: more of the command line."""
    done = []
    for start, where, agent in (
        (pi_rpc, tmp_path / "pi", "pi-agent"),
        (our_rpc, tmp_path / "ours", "agent"),
    ):
        (where / agent).mkdir(parents=True)
        (where / "note.txt").write_text("hello note\n")
        if settings is not None:
            (where / agent / "settings.json").write_text(json.dumps(settings))
        argv = list(options)
        if session is not None:
            argv += ["--session", str(_write_session(where, compacted=session))]
        with WireServer(list(replies)) as server, start(where, server.base_url, argv) as process:
            returned = script(process, server)
            assert process.close() == 0
            done.append((returned, process, server))
    return done


def _events(process: RpcProcess, kept: Callable[[JsonObject], bool]) -> list[JsonObject]:
    return normalised_events([line for line in process.lines if kept(line)])


def _local(value: Any, where: Path) -> Any:
    """``value`` with the process's folder written as ``<dir>`` (each program has its own)."""
    return json.loads(json.dumps(value).replace(str(where), "<dir>"))


def _stats_around_a_prompt(process: RpcProcess, server: WireServer) -> list[JsonObject]:
    before = process.request({"type": "get_session_stats"})
    process.request({"type": "prompt", "message": "Anything else?"})
    process.wait_for_event("agent_settled")
    return [before, process.request({"type": "get_session_stats"})]


@pytest.mark.pi
@pytest.mark.parametrize("compacted", [False, True])
def test_session_stats_are_pis_for_the_same_file(tmp_path: Path, compacted: bool) -> None:
    replies = [Reply(text_stream(API, "Nothing else."))]
    (theirs, *_), (ours, *_) = _both(tmp_path, _stats_around_a_prompt, replies, session=compacted)
    assert _local(ours, tmp_path / "ours") == _local(theirs, tmp_path / "pi")
    before = theirs[0]["data"]
    assert (before["userMessages"], before["toolCalls"], before["totalMessages"]) == (3, 1, 8)
    assert before["sessionFile"].endswith("work.jsonl")
    # After the compaction no answer has measured the context yet.
    assert (before["contextUsage"]["tokens"] is None) is compacted
    assert theirs[1]["data"]["contextUsage"]["tokens"] is not None


@pytest.mark.pi
def test_session_stats_of_a_session_kept_in_memory_are_pis(tmp_path: Path) -> None:
    replies = [Reply(text_stream(API, "Nothing else."))]
    (theirs, *_), (ours, *_) = _both(
        tmp_path, _stats_around_a_prompt, replies, options=("--no-session",)
    )
    for answers in (theirs, ours):
        for answer in answers:
            assert "sessionFile" not in answer["data"]  # none: Pi leaves it undefined
            answer["data"]["sessionId"] = "<new session>"
    assert ours == theirs
    assert theirs[1]["data"]["userMessages"] == 1


def _compact_twice(process: RpcProcess, server: WireServer) -> list[JsonObject]:
    first = process.request({"type": "compact", "customInstructions": "Keep the numbers."})
    again = process.request({"type": "compact"})
    return [first, again, process.request({"type": "get_session_stats"})]


def _summary_requests(server: WireServer) -> list[tuple[str, str]]:
    """Each summary request's conversation and its last line (the focus asked for). The
    instructions around them are ctxmodes' own wording (ctxmodes.compaction.prompts)."""
    asked = []
    for request in server.requests:
        (text,) = json.loads(request["body"])["messages"][-1]["content"]
        conversation, _, rest = text["text"].partition("</conversation>")
        asked.append((conversation, rest.rsplit("\n", 1)[-1]))
    return asked


@pytest.mark.pi
def test_compact_answers_pis_compaction_result(tmp_path: Path) -> None:
    replies = [Reply(text_stream(API, "The summary.")) for _ in range(2)]
    done = _both(
        tmp_path,
        _compact_twice,
        replies,
        session=False,
        settings={"compaction": {"keepRecentTokens": 200}},
    )
    (theirs, pi, pi_server), (ours, mine, our_server) = done
    assert _local(ours, tmp_path / "ours") == _local(theirs, tmp_path / "pi")
    result = theirs[0]["data"]
    assert list(result) == [
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "estimatedTokensAfter",
        "usage",
        "details",
    ]
    assert result["firstKeptEntryId"] in {entry_id for entry_id, _, _ in MESSAGES}
    assert (theirs[1]["success"], theirs[1]["error"]) == (False, "Already compacted")
    events = [_events(process, lambda line: line["type"] != "response") for process in (pi, mine)]
    assert events[1] == events[0]
    assert [e["type"] for e in events[0]] == ["compaction_start", "compaction_end"] * 2
    asked = _summary_requests(pi_server)
    assert _summary_requests(our_server) == asked
    assert asked[0][1] == "Additional focus: Keep the numbers."


def _compact_once(process: RpcProcess, server: WireServer) -> JsonObject:
    return process.request({"type": "compact"})


@pytest.mark.pi
def test_a_summary_retried_after_an_overloaded_model_is_told_as_pi_tells_it(
    tmp_path: Path,
) -> None:
    replies = [
        Reply(json_error("Service overloaded, try later"), status=529),
        Reply(text_stream(API, "The summary.")),
    ]
    quick = {"compaction": {"keepRecentTokens": 200}, "retry": {"baseDelayMs": 10}}
    (theirs, pi, _), (ours, mine, _) = _both(
        tmp_path, _compact_once, replies, session=False, settings=quick
    )
    assert (ours["success"], theirs["success"]) == (True, True)
    events = [_events(process, lambda line: line["type"] != "response") for process in (pi, mine)]
    assert events[1] == events[0]
    assert [event["type"] for event in events[0]] == [
        "compaction_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
        "compaction_end",
    ]


def _compact_fresh(process: RpcProcess, server: WireServer) -> JsonObject:
    return process.request({"type": "compact"})


@pytest.mark.pi
def test_a_session_too_small_is_not_compacted(tmp_path: Path) -> None:
    (theirs, pi, _), (ours, mine, _) = _both(tmp_path, _compact_fresh, [])
    assert ours == theirs
    assert theirs["error"] == "Nothing to compact (session too small)"
    assert mine.lines[:-1] == pi.lines[:-1]  # compaction_start, then its failed end


def _cancel_the_retry(process: RpcProcess, server: WireServer) -> JsonObject:
    process.send({"id": "p1", "type": "prompt", "message": "Hello"})
    process.wait_for_event("auto_retry_start")
    cancelled = process.request({"type": "abort_retry"})
    process.wait_for_event("agent_settled")
    return cancelled


@pytest.mark.pi
def test_abort_retry_cancels_the_wait_as_pi_does(tmp_path: Path) -> None:
    replies = [Reply(json_error("Service overloaded, try later"), status=529)]
    slow = {"retry": {"baseDelayMs": 20_000}}
    (theirs, pi, pi_server), (ours, mine, our_server) = _both(
        tmp_path, _cancel_the_retry, replies, settings=slow
    )
    answered = {"id": "req-1", "type": "response", "command": "abort_retry", "success": True}
    assert ours == theirs == answered
    # The response and the retry's end race in Pi; the events themselves are compared.
    events = [_events(process, lambda line: line != answered) for process in (pi, mine)]
    assert events[1] == events[0]
    assert events[0][-2:] == [
        {"type": "auto_retry_end", "success": False, "attempt": 1, "finalError": "Retry cancelled"},
        {"type": "agent_settled"},
    ]
    assert len(pi_server.requests) == len(our_server.requests) == 1


def _abort_the_compaction(process: RpcProcess, server: WireServer) -> list[JsonObject]:
    process.send({"id": "c1", "type": "compact"})
    process.wait_for_event("compaction_start")
    assert server.arrived.wait(30)
    aborted = process.request({"type": "abort"})
    # The compaction's answer comes before or after the abort's: both are answered.
    answered = [line for line in process.lines if line.get("id") == "c1"]
    if not answered:
        answered.append(process.wait_for(lambda line: line.get("id") == "c1"))
    return [aborted, *answered, process.request({"type": "get_session_stats"})]


@pytest.mark.pi
def test_abort_cancels_a_compaction(tmp_path: Path) -> None:
    summary = Reply(text_stream(API, "Never finished."), behaviour="hold", cut_after=1)
    (theirs, pi, _), (ours, mine, _) = _both(
        tmp_path,
        _abort_the_compaction,
        [summary],
        session=False,
        settings={"compaction": {"keepRecentTokens": 200}},
    )
    assert _local(ours, tmp_path / "ours") == _local(theirs, tmp_path / "pi")
    assert (theirs[1]["success"], theirs[1]["error"]) == (False, "Compaction cancelled")
    assert theirs[2]["data"]["totalMessages"] == len(MESSAGES)  # nothing was appended
    events = [_events(process, lambda line: line["type"] != "response") for process in (pi, mine)]
    assert events[1] == events[0]
    assert events[0][-1] == {
        "type": "compaction_end",
        "reason": "manual",
        "aborted": True,
        "willRetry": False,
    }


def test_instructions_that_are_not_text_are_refused(tmp_path: Path) -> None:
    # Pi hands any value on to the summary prompt; ctxmodes says what is wrong instead.
    with WireServer([]) as server, our_rpc(tmp_path, server.base_url) as process:
        answer = process.request({"type": "compact", "customInstructions": ["be brief"]})
        assert process.close() == 0
    assert (answer["success"], answer["error"]) == (False, '"customInstructions" must be a string')
    assert [line["type"] for line in process.lines] == ["response"]
