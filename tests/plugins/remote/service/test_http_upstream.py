"""``ctxmodes serve`` in front of a model served over HTTP, as a team deploys it: a
``[providers.<name>]`` endpoint of the configuration, reached through the real transport.
The model's answer streams through with the model's token usage; the model sees the turn in
plaintext; the upstream's address, and any credential written into it, stays out of the
service's log."""

import json

import pytest
from support.serve_process import ServeProcess, create_token
from support.service_rig import ServiceClient, turn_headers
from support.wire_server import Reply, WireServer, text_stream

pytestmark = pytest.mark.slow

SECRET = "gateway-password-4f1c"


def _events(body: bytes) -> list[dict[str, object]]:
    return [
        json.loads(line.removeprefix(b"data: "))
        for line in body.splitlines()
        if line.startswith(b"data: ")
    ]


def test_a_model_over_http_streams_through_and_its_address_stays_out_of_the_log(
    tmp_path, tls, monkeypatch
):
    answer = text_stream("openai-responses", "hello from the model", pieces=3)
    with WireServer([Reply(answer)]) as model:
        host = model.base_url.removeprefix("http://")
        # Some gateways take their credential in the address itself.
        (tmp_path / "config").mkdir()
        (tmp_path / "config" / "config.toml").write_text(
            "[providers.gateway]\n"
            'api = "openai-responses"\n'
            f'base_url = "http://team:{SECRET}@{host}/v1"\n'
            'models = [{ id = "m", context_window = 32768, max_tokens = 4096 }]\n'
        )
        monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
        data = tmp_path / "data"
        token = create_token(data, "alice")
        service = ServeProcess("gateway/m", data, tls, tmp_path / "serve.log")
        try:
            turn = {
                "model": "m",
                "stream": True,
                "input": [
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "say hello"}],
                    }
                ],
            }
            reply = ServiceClient(service.base, tls, token).post_json(
                "/responses", turn, turn_headers("s1", "w1")
            )
        finally:
            service.stop()

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
