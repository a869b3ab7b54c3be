"""End to end on the Anthropic, Gemini, Vertex, Mistral, Azure OpenAI and Bedrock wire
formats: ``ctxmodes run --mode tree`` with a catalog model, its endpoint moved onto the
oracle's canned server (``provider_oracle.mjs --serve``) by Pi's ``models.json`` or the
provider's own variables, through two rollovers, a notes read and a history search; the
session then opens in the real Pi with the same context.

The canned answers are the demo conversation written in each format's wire encoding, served
in the order Tree asks for them: a turn per request, and after each ``new_context`` call the
summary of the window it leaves behind. The Anthropic and Gemini answers take the shape of the
oracle's recorded cases (pings and cache usage in Anthropic's events, Gemini's ``\\r\\n``
framing with its function calls and finish reason in one chunk), unlike the project's own
loopback server in ``test_real_transports_e2e``. On those formats the window marker travels
in the system channel.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import ctxmodes, isolate_settings, pi_agent_dir
from support.pi_oracle import require_pi
from support.tree_sessions import assert_pi_sees_the_same, tool_results
from support.wire_server import text_stream, tool_calls_stream

from ctxmodes.session.manager import SessionManager
from ctxmodes_tree.demo import CODE_NAME, DEMO_SCRIPT, PROMPT

ARCHIVE = "codex-context-tree-archive"
MODELS = {
    "anthropic-messages": "anthropic/claude-sonnet-4-5",
    "google-generative-ai": "google/gemini-2.5-flash",
    "google-vertex": "google-vertex/gemini-2.5-flash",
    "mistral-conversations": "mistral/mistral-small-latest",
    "azure-openai-responses": "azure-openai-responses/gpt-5.1",
    "bedrock-converse-stream": "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}


def _sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"


def _mistral(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    base = {"id": "cmpl", "object": "chat.completion.chunk", "model": "mistral-small-latest"}
    events = []
    if text:
        delta = {"role": "assistant", "content": text}
        events.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    for index, call in enumerate(calls):
        tool = {
            "id": f"call{index:05d}",
            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            "index": index,
        }
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [tool]}}]})
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
    finish = "tool_calls" if calls else "stop"
    events.append(
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}
    )
    return {"sse": _sse(events)}


def _azure(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    frames = tool_calls_stream("openai-responses", calls, text) if calls else None
    frames = frames or text_stream("openai-responses", text)
    return {"sse": b"".join(frames).decode()}


def _anthropic_event(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n"


def _anthropic(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    usage = {
        "input_tokens": 900,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": 1,
        "service_tier": "standard",
    }
    message = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if text:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": text}))
    for index, call in enumerate(calls):
        block = {"type": "tool_use", "id": f"toolu_{index:02d}", "name": call["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call["arguments"])}
        blocks.append((block, delta))
    for index, (block, delta) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "ping"})
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    final_usage = {
        "input_tokens": 900,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 20,
    }
    stop = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    events.append({"type": "message_delta", "delta": stop, "usage": final_usage})
    events.append({"type": "message_stop"})
    return {"sse": "".join(_anthropic_event(event) for event in events)}


def _gemini(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": c["name"], "args": c["arguments"]}} for c in calls]
    usage = {"promptTokenCount": 900, "candidatesTokenCount": 20, "totalTokenCount": 920}
    chunk = {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": "STOP"}],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "loopback",
    }
    return {"sse": f"data: {json.dumps(chunk)}\r\n\r\n"}


def _event(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return {"headers": headers, "payload": json.dumps(payload)}


def _bedrock(text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    events = [_event("messageStart", {"role": "assistant"})]
    index = 0
    if text:
        events.append(
            _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}})
        )
        events.append(_event("contentBlockStop", {"contentBlockIndex": 0}))
        index = 1
    for offset, call in enumerate(calls, start=index):
        start = {"toolUse": {"toolUseId": f"tooluse_{offset}", "name": call["name"]}}
        events.append(_event("contentBlockStart", {"contentBlockIndex": offset, "start": start}))
        delta = {"toolUse": {"input": json.dumps(call["arguments"])}}
        events.append(_event("contentBlockDelta", {"contentBlockIndex": offset, "delta": delta}))
        events.append(_event("contentBlockStop", {"contentBlockIndex": offset}))
    events.append(_event("messageStop", {"stopReason": "tool_use" if calls else "end_turn"}))
    usage = {"inputTokens": 900, "outputTokens": 20, "totalTokens": 920}
    events.append(_event("metadata", {"usage": usage, "metrics": {"latencyMs": 10}}))
    return {"eventStream": events}


ENCODERS = {
    "anthropic-messages": _anthropic,
    "google-generative-ai": _gemini,
    "google-vertex": _gemini,
    "mistral-conversations": _mistral,
    "azure-openai-responses": _azure,
    "bedrock-converse-stream": _bedrock,
}


def _answers(api: str) -> list[dict[str, Any]]:
    """The demo's turns and summaries in the order Tree requests them."""
    encode = ENCODERS[api]
    summaries = list(DEMO_SCRIPT["summaries"])
    answers = []
    for turn in DEMO_SCRIPT["responses"]:
        calls = [
            {"name": call["name"], "arguments": call.get("arguments", {})}
            for call in turn.get("tool_calls", [])
        ]
        answers.append(encode(turn.get("text", ""), calls))
        if any(call["name"] == "new_context" for call in calls):
            answers.append(encode(summaries.pop(0), []))
    return answers


#: The variable each provider's key is read from, for the formats Pi's ``models.json`` moves.
KEY_VARIABLES = {
    "anthropic-messages": "ANTHROPIC_API_KEY",
    "google-generative-ai": "GEMINI_API_KEY",
    "google-vertex": "GOOGLE_CLOUD_API_KEY",
    "mistral-conversations": "MISTRAL_API_KEY",
    "bedrock-converse-stream": "AWS_BEARER_TOKEN_BEDROCK",
}

#: Where the endpoint lives under the server when the catalog's base URL is a template (Vertex
#: takes a custom base URL holding its version and location, as a proxy would).
TEMPLATE_PATHS = {"google-vertex": "/v1/projects/loop/locations/global"}


def _configure(
    api: str, ready: dict[str, Any], agent: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if api == "azure-openai-responses":
        monkeypatch.setenv("AZURE_OPENAI_BASE_URL", ready["modelBaseUrl"])
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-loopback-key")
        return
    provider = MODELS[api].split("/", 1)[0]
    base_url = (
        ready["baseUrl"] + TEMPLATE_PATHS[api] if api in TEMPLATE_PATHS else ready["modelBaseUrl"]
    )
    (agent / "models.json").write_text(json.dumps({"providers": {provider: {"baseUrl": base_url}}}))
    monkeypatch.setenv(KEY_VARIABLES[api], f"{provider}-loopback-key")


def _first_line(path: Path, process: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = path.read_text()
        if "\n" in text:
            return text.split("\n", 1)[0]
        if process.poll() is not None:
            break
        time.sleep(0.02)
    raise AssertionError(f"the oracle's server did not start: {path.read_text()!r}")


@pytest.mark.pi
@pytest.mark.parametrize("api", sorted(MODELS))
def test_tree_session_over_the_wire_format_opens_in_pi(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pi = require_pi()
    isolate_settings(tmp_path, monkeypatch)
    agent = pi_agent_dir(tmp_path, monkeypatch)
    case = tmp_path / "case.json"
    case.write_text(
        json.dumps(
            {
                "name": f"e2e-{api}",
                "api": api,
                "model": {"ref": MODELS[api]},
                "responses": _answers(api),
            }
        )
    )
    # Node writes to a file synchronously; through a pipe it may exit before the last of a
    # long request record is flushed.
    record = tmp_path / "server.out"
    with record.open("w") as sink:
        server = subprocess.Popen(
            [pi.node, str(pi.oracle / "provider_oracle.mjs"), "--serve", str(case)],
            stdin=subprocess.PIPE,
            stdout=sink,
            text=True,
            env={**os.environ, "PI_NODE_MODULES": str(pi.node_modules)},
        )
    try:
        assert server.stdin is not None
        ready = json.loads(_first_line(record, server))
        _configure(api, ready, agent, monkeypatch)
        session_file = tmp_path / "session.jsonl"
        code, out, err = ctxmodes(
            capsys,
            "run",
            "--mode",
            "tree",
            "--model",
            MODELS[api],
            "--session",
            str(session_file),
            PROMPT,
        )
        server.stdin.close()
        server.wait(timeout=60)
        requests = json.loads(record.read_text().split("\n", 1)[1])["requests"]
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
    assert code == 0, err
    assert f"The release code name is {CODE_NAME}" in out

    manager = SessionManager.open(session_file)
    archives = [e for e in manager.get_entries() if getattr(e, "custom_type", None) == ARCHIVE]
    assert len(archives) == 2
    results = tool_results(manager)
    assert any("code name chosen" in text for text in results["notes"])
    assert any(CODE_NAME in text for text in results["history"])
    assert len(requests) == len(_answers(api))
    bodies = [request["body"] for request in requests]
    turn = next(body for body in bodies if "tools" in body or "toolConfig" in body)
    if api == "bedrock-converse-stream":
        names = [tool["toolSpec"]["name"] for tool in turn["toolConfig"]["tools"]]
    elif api.startswith("google-"):
        (tools,) = turn["tools"]
        names = [tool["name"] for tool in tools["functionDeclarations"]]
    elif api == "mistral-conversations":
        names = [tool["function"]["name"] for tool in turn["tools"]]
    else:
        names = [tool["name"] for tool in turn["tools"]]
    assert {"history", "notes", "new_context"} <= set(names)
    # Without a developer role the window marker follows the system prompt in its own block.
    if api == "anthropic-messages":
        system = [block["text"] for block in turn["system"][1:]]
        assert any("Current context window id:" in text for text in system)
    elif api.startswith("google-"):
        system = [part["text"] for part in turn["systemInstruction"]["parts"][1:]]
        assert any("Current context window id:" in text for text in system)

    assert_pi_sees_the_same(pi, session_file, manager)
