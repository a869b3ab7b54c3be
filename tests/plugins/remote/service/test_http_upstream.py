"""``ctxmodes serve`` in front of a model served over HTTP, as a team deploys it: an endpoint
of the configuration (or of Pi's ``models.json``), reached through the real transport. The
model's answer streams through with the model's token usage; a model whose wire has no
namespaces is offered Codex's namespaced tools by distinct names, and its calls go back in
their namespace; the model sees the turn in plaintext; the upstream's address, a credential
written into it, and a key the model echoes in an error stay out of the answer and the
service's log."""

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.provider_cases import ANTHROPIC_THINKING_TURNS, recorded_case, recorded_reply
from support.serve_process import ServeProcess, create_token, upstream_endpoint
from support.service_rig import ServiceClient, turn_headers
from support.wire_server import Reply, WireServer, json_error, text_stream, tool_call_stream

from ctxmodes.windows.tools import namespace_tool

pytestmark = pytest.mark.slow

SECRET = "gateway-password-4f1c"


def _events(body: bytes) -> list[dict[str, object]]:
    return [
        json.loads(line.removeprefix(b"data: "))
        for line in body.splitlines()
        if line.startswith(b"data: ")
    ]


def _configure(tmp_path, monkeypatch, api: str, base_url: str, **options: str) -> None:
    upstream_endpoint(tmp_path / "config", api, base_url, **options)
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))


@contextlib.contextmanager
def _service(tmp_path, tls) -> Iterator[ServiceClient]:
    """``ctxmodes serve`` in front of the configured ``gateway/m``, and alice's client of it;
    the service stops on leaving."""
    data = tmp_path / "data"
    token = create_token(data, "alice")
    service = ServeProcess("gateway/m", data, tls, tmp_path / "serve.log")
    try:
        yield ServiceClient(service.base, tls, token)
    finally:
        service.stop()


def _user(text: str) -> dict[str, object]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def test_a_model_over_http_streams_through_and_its_address_stays_out_of_the_log(
    tmp_path, tls, monkeypatch
):
    answer = text_stream("openai-responses", "hello from the model", pieces=3)
    with WireServer([Reply(answer)]) as model:
        host = model.base_url.removeprefix("http://")
        # Some gateways take their credential in the address itself.
        _configure(tmp_path, monkeypatch, "openai-responses", f"http://team:{SECRET}@{host}/v1")
        with _service(tmp_path, tls) as client:
            turn = {"model": "m", "stream": True, "input": [_user("say hello")]}
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))

    assert reply.status == 200, reply.body
    events = _events(reply.body)
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(map(str, deltas)) == "hello from the model"
    assert events[-1]["type"] == "response.completed"
    # Codex counts the window's tokens from it: the model's own usage, not zeros.
    usage = events[-1]["response"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (5, 2, 7)
    [sent] = model.requests
    assert sent["path"] == "/v1/responses"
    assert "say hello" in sent["body"].decode()

    log = (tmp_path / "serve.log").read_text()
    assert '"path":"/backend-api/codex/responses","status":200' in log
    assert SECRET not in log
    assert host not in log


def _offered(api: str, request: dict[str, Any]) -> list[tuple[str, str]]:
    """Each tool the model was offered: its name and description."""
    if api == "anthropic-messages":
        return [(tool["name"], tool["description"]) for tool in request["tools"]]
    if api == "google-generative-ai":
        [group] = request["tools"]
        return [(f["name"], f["description"]) for f in group["functionDeclarations"]]
    return [(t["function"]["name"], t["function"]["description"]) for t in request["tools"]]


def _sent_back(api: str, request: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """The model's own tool call and its result, as the next request sent them: the call's
    name, its arguments and the result's text."""
    if api == "anthropic-messages":
        blocks = [b for m in request["messages"] for b in m["content"] if isinstance(b, dict)]
        [call] = [b for b in blocks if b["type"] == "tool_use"]
        [result] = [b for b in blocks if b["type"] == "tool_result"]
        content = result["content"]
        text = content if isinstance(content, str) else "".join(c["text"] for c in content)
        return call["name"], call["input"], text
    if api == "google-generative-ai":
        parts = [part for content in request["contents"] for part in content["parts"]]
        [call] = [part["functionCall"] for part in parts if "functionCall" in part]
        [result] = [part["functionResponse"] for part in parts if "functionResponse" in part]
        return call["name"], call["args"], result["response"]["output"]
    [assistant] = [m for m in request["messages"] if m["role"] == "assistant"]
    [call] = assistant["tool_calls"]
    [result] = [m for m in request["messages"] if m["role"] == "tool"]
    return call["function"]["name"], json.loads(call["function"]["arguments"]), result["content"]


@pytest.mark.parametrize(
    "api", ["openai-completions", "anthropic-messages", "google-generative-ai"]
)
def test_a_model_without_namespaces_is_offered_codexs_namespaced_tools_by_distinct_names(
    tmp_path, tls, monkeypatch, api
):
    # Chat Completions (Ollama, llama.cpp, most gateways), Anthropic's Messages and Gemini
    # have no namespaces: offered by their bare names, history's and notes' search_contents
    # would be one name.
    arguments = json.dumps({"path": "plan.md", "text": "step one"})
    replies = [
        Reply(tool_call_stream(api, "notes__write_file", arguments)),
        Reply(text_stream(api, "saved")),
    ]
    tools = [namespace_tool("history", encrypted=True), namespace_tool("notes", encrypted=True)]
    with WireServer(replies) as model:
        if api != "openai-completions":
            # A custom provider of Pi's models.json (the Anthropic SDK adds /v1 itself).
            base = model.base_url + ("/v1beta" if api == "google-generative-ai" else "")
            provider = {"baseUrl": base, "api": api, "apiKey": "sk-loop"}
            (tmp_path / "agent").mkdir()
            (tmp_path / "agent" / "models.json").write_text(
                json.dumps({"providers": {"gateway": {**provider, "models": [{"id": "m"}]}}})
            )
            monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
        else:
            _configure(tmp_path, monkeypatch, api, f"{model.base_url}/v1")
        with _service(tmp_path, tls) as client:
            first = {"model": "m", "stream": True, "input": [_user("plan")], "tools": tools}
            reply = client.post_json("/responses", first, turn_headers("s1", "w1"))
            assert reply.status == 200, reply.body
            [call] = [
                e["item"]
                for e in _events(reply.body)
                if e["type"] == "response.output_item.done" and e["item"]["type"] == "function_call"
            ]
            output = {"type": "function_call_output", "call_id": call["call_id"], "output": "ok"}
            second = {**first, "input": [_user("plan"), call, output]}
            reply = client.post_json("/responses", second, turn_headers("s1", "w1"))

    # Back to Codex in the namespace it declared, the note's text sealed as it asked.
    assert (call["namespace"], call["name"]) == ("notes", "write_file")
    sent_arguments = json.loads(call["arguments"])
    assert sent_arguments["path"] == "plan.md"
    assert call["encrypted_function_args"] == ["text"]
    assert "step one" not in call["arguments"]
    deltas = [e["delta"] for e in _events(reply.body) if e["type"] == "response.output_text.delta"]
    assert "".join(map(str, deltas)) == "saved"

    offered_request, answered_request = (json.loads(r["body"]) for r in model.requests)
    names = [name for name, _ in _offered(api, offered_request)]
    assert len(names) == len(set(names))
    offered = dict(_offered(api, offered_request))
    assert {"history__search_contents", "notes__search_contents", "notes__write_file"} <= set(
        offered
    )
    assert offered["notes__write_file"].startswith("Checkpoint files")
    # The call and its output reach the model again under the name it used, in plaintext.
    name, call_arguments, result = _sent_back(api, answered_request)
    assert (name, call_arguments) == ("notes__write_file", {"path": "plan.md", "text": "step one"})
    assert result == "ok"


def test_a_model_that_refuses_the_key_fails_the_response_without_the_key_in_it_or_the_log(
    tmp_path, tls, monkeypatch
):
    key = "sk-team-gateway-0c9d1e"
    # Servers echo the key they refused (OpenAI's "Incorrect API key provided: sk-…").
    refused = Reply(json_error(f"Incorrect API key provided: {key}"), status=401)
    with WireServer([refused]) as model:
        base_url = f"{model.base_url}/v1"
        _configure(tmp_path, monkeypatch, "openai-completions", base_url, api_key_env="GATEWAY_KEY")
        monkeypatch.setenv("GATEWAY_KEY", key)
        with _service(tmp_path, tls) as client:
            turn = {"model": "m", "stream": True, "input": [_user("hello")]}
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))

    [sent] = model.requests
    assert sent["headers"]["Authorization"] == f"Bearer {key}"
    events = _events(reply.body)
    assert events[-1]["type"] == "response.failed"
    message = events[-1]["response"]["error"]["message"]
    assert "Incorrect API key provided" in message
    assert key not in reply.body.decode()
    assert key not in (tmp_path / "serve.log").read_text()


#: Two turns recorded from the live APIs, a thinking model calling a tool and then answering
#: with its result: (api, model, effort, first turn, next turn).
THINKING_TURNS = [
    pytest.param(
        "anthropic-messages",
        "claude-haiku-4-5-20251001",
        "minimal",
        *ANTHROPIC_THINKING_TURNS,
        id="anthropic",
    ),
    pytest.param(
        "openai-responses",
        "gpt-5.1",
        "high",
        "responses_reasoning_tool_call",
        "responses_reasoning_replay",
        id="openai",
    ),
]


def _first_turn_thinking(pi: dict[str, Any]) -> str:
    """The thinking text of the first turn, as Pi's stream ended its block."""
    [text] = [e["content"] for e in pi["events"] if e["type"] == "thinking_end"]
    return str(text)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys and values."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@pytest.mark.parametrize("summaries", [False, True], ids=["sealed", "shown"])
@pytest.mark.parametrize(("api", "model_id", "effort", "first", "then"), THINKING_TURNS)
def test_the_models_thinking_goes_to_the_client_sealed_and_back_to_the_model_as_pi_sends_it(
    tmp_path, tls, monkeypatch, api, model_id, effort, first, then, summaries
):
    # Anthropic refuses a tool-use turn, thinking on, without the turn's signed thinking
    # block; OpenAI's reasoning models start over without their reasoning item.
    (case, pi_first_case), (next_case, pi_then) = recorded_case(first), recorded_case(then)
    pi_first = pi_first_case
    [prompt] = case["context"]["messages"]
    [tool] = case["context"]["tools"]
    [result] = [m for m in next_case["context"]["messages"] if m["role"] == "toolResult"]
    with WireServer([recorded_reply(case), recorded_reply(next_case)]) as model:
        base = model.base_url + ("/v1" if api == "openai-responses" else "")
        provider = {"baseUrl": base, "api": api, "apiKey": "sk-loop"}
        models = [{"id": model_id, "reasoning": True}]
        (tmp_path / "agent").mkdir()
        (tmp_path / "agent" / "models.json").write_text(
            json.dumps({"providers": {"gateway": {**provider, "models": models}}})
        )
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
        data = tmp_path / "data"
        token = create_token(data, "alice")
        service = ServeProcess(f"gateway/{model_id}", data, tls, tmp_path / "serve.log")
        try:
            client = ServiceClient(service.base, tls, token)
            turn = {
                "model": model_id,
                "stream": True,
                "input": [_user(prompt["content"])],
                "tools": [{"type": "function", **tool}],
                "reasoning": {"effort": effort, **({"summary": "auto"} if summaries else {})},
                "include": ["reasoning.encrypted_content"],
            }
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))
            assert reply.status == 200, reply.body
            answered = _events(reply.body)
            # Kept as Codex keeps them: each finished output item, in the order it came.
            output = [e["item"] for e in answered if e["type"] == "response.output_item.done"]
            [call] = [item for item in output if item["type"] == "function_call"]
            answer = {
                "type": "function_call_output",
                "call_id": call["call_id"],
                "output": result["content"][0]["text"],
            }
            turn["input"] = [*turn["input"], *output, answer]
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))
            assert reply.status == 200, reply.body
        finally:
            service.stop()

    # The thinking comes first, as the model thought before it called the tool.
    assert [item["type"] for item in output] == ["reasoning", "function_call"]
    reasoning = output[0]
    first_sent, then_sent = (json.loads(r["body"]) for r in model.requests)
    [pi_first], [pi_then] = ([r["body"] for r in pi["requests"]] for pi in (pi_first, pi_then))
    if api == "anthropic-messages":
        # Codex's effort reaches the model as Pi sends that level.
        assert first_sent["thinking"] == pi_first["thinking"]
        thinking = pi_then["messages"][1]["content"][0]
        assert thinking["type"] == "thinking"
        secrets_of_the_model = [thinking["thinking"], thinking["signature"]]
        # The model's own turn comes back exactly as Pi replays it from its session.
        assert then_sent["messages"][1] == pi_then["messages"][1]
        assert then_sent["thinking"] == pi_then["thinking"]
    else:
        assert first_sent["reasoning"] == pi_first["reasoning"]
        replayed = [item for item in pi_then["input"] if item.get("type") == "reasoning"]
        secrets_of_the_model = [replayed[0]["encrypted_content"]]
        start = next(
            i for i, item in enumerate(then_sent["input"]) if item.get("type") == "reasoning"
        )
        assert then_sent["input"][start:] == pi_then["input"][2:]
        assert then_sent["reasoning"] == pi_then["reasoning"]
    # The client carries the model's block only sealed, under the account's key; it is
    # shown the thinking only when it asked, as the reasoning item's summary.
    thought = "".join(
        e["delta"] for e in answered if e["type"] == "response.reasoning_summary_text.delta"
    )
    if summaries:
        shown = _first_turn_thinking(pi_first_case)
        assert reasoning["summary"] == [{"type": "summary_text", "text": shown}]
        # Streamed as it came (Pi's OpenAI stream ends a summary part with a blank line).
        assert thought.rstrip("\n") == shown
        secrets_of_the_model = secrets_of_the_model[1:] if api == "anthropic-messages" else []
    else:
        assert reasoning["summary"] == []
        assert thought == ""
    for secret in secrets_of_the_model:
        assert not any(secret in text for text in _strings(answered))


def test_the_signature_gemini_puts_on_its_call_goes_round_sealed_back_on_the_call(
    tmp_path, tls, monkeypatch
):
    # Gemini 3 refuses a request whose calls of the turn lack the signature it put on them;
    # a Codex function call has nowhere to keep one.
    case, pi = recorded_case("google_gemini3_function_call_thought_signature")
    [tool] = case["context"]["tools"]
    [signed] = [e["toolCall"] for e in pi["events"] if e["type"] == "toolcall_end"]
    answer = Reply(text_stream("google-generative-ai", "15"))
    with WireServer([recorded_reply(case), answer]) as model:
        provider = {"baseUrl": f"{model.base_url}/v1beta", "api": "google-generative-ai"}
        gateway = {**provider, "apiKey": "sk-loop", "models": [{"id": "gemini-3-flash-preview"}]}
        (tmp_path / "agent").mkdir()
        (tmp_path / "agent" / "models.json").write_text(
            json.dumps({"providers": {"gateway": gateway}})
        )
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
        data = tmp_path / "data"
        token = create_token(data, "alice")
        service = ServeProcess("gateway/gemini-3-flash-preview", data, tls, tmp_path / "log")
        try:
            client = ServiceClient(service.base, tls, token)
            turn = {
                "model": "gemini-3-flash-preview",
                "stream": True,
                "input": [_user("What is 5 times 3?")],
                "tools": [{"type": "function", **tool}],
                "include": ["reasoning.encrypted_content"],
            }
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))
            output = [
                e["item"] for e in _events(reply.body) if e["type"] == "response.output_item.done"
            ]
            [call] = [item for item in output if item["type"] == "function_call"]
            result = {"type": "function_call_output", "call_id": call["call_id"], "output": "15"}
            turn["input"] = [*turn["input"], *output, result]
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))
            assert reply.status == 200, reply.body
        finally:
            service.stop()

    # The signature rides just before its call, sealed.
    kinds = [item["type"] for item in output]
    assert kinds[kinds.index("function_call") - 1] == "reasoning"
    assert signed["thoughtSignature"][:40] not in json.dumps(output)
    answered = json.loads(model.requests[1]["body"])
    [part] = [p for c in answered["contents"] for p in c["parts"] if "functionCall" in p]
    assert part["functionCall"]["name"] == "multiply"
    assert part["thoughtSignature"] == signed["thoughtSignature"]


@pytest.mark.parametrize(("effort", "budget"), [("low", 3000), ("medium", None)])
def test_the_configured_thinking_budgets_apply_to_the_effort_codex_asks_for(
    tmp_path, tls, monkeypatch, effort, budget
):
    """``[thinking_budgets]`` (Pi's ``thinkingBudgets``) is what a model that counts its
    thinking in tokens gets for the effort Codex sends, as a session's turn gets it; a level
    the configuration leaves out keeps the transport's own budget."""
    from ctxmodes.providers.transport.budget import answer_room, thinking_budget

    answer = text_stream("anthropic-messages", "thought about it")
    with WireServer([Reply(answer)]) as model:
        _configure(tmp_path, monkeypatch, "anthropic-messages", model.base_url, reasoning=True)
        config = tmp_path / "config" / "config.toml"
        config.write_text(config.read_text() + "[thinking_budgets]\nlow = 3000\n")
        with _service(tmp_path, tls) as client:
            turn = {
                "model": "m",
                "stream": True,
                "input": [_user("think a little")],
                "reasoning": {"effort": effort},
            }
            reply = client.post_json("/responses", turn, turn_headers("s1", "w1"))
    assert reply.status == 200, reply.body
    [sent] = model.requests
    thinking = json.loads(sent["body"])["thinking"]
    # The endpoint's model answers in at most 8192 tokens, 1024 of them kept for the answer.
    default = answer_room(thinking_budget(effort, None), 8192)
    assert default != 3000
    assert (thinking["type"], thinking["budget_tokens"]) == ("enabled", budget or default)
