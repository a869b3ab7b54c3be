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
