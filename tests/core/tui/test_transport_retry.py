"""The terminal session shows a transport-level retry (Pi's ``retry.provider``) as a
warning while the request is resent, with the real Chat Completions transport on loopback."""

from __future__ import annotations

from support.terminal import ENTER, make_agent, run_terminal
from support.wire_server import Reply, WireServer, json_error, text_stream

from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http_model import HttpModelProvider
from ctxmodes.providers.request_settings import ProviderRetrySettings

API = "openai-completions"


def test_a_transport_retry_is_shown_then_the_reply(tmp_path):
    replies = [
        Reply(json_error("upstream overloaded"), status=503, headers={"retry-after-ms": "1"}),
        Reply(text_stream(API, "Recovered after a resend")),
    ]
    with WireServer(replies) as server:
        model = ModelSpec.model_validate(
            {"id": "m", "api": API, "provider": "loop", "baseUrl": f"{server.base_url}/v1"}
        )
        provider = HttpModelProvider(model, lambda: "sk-loopback-key")
        provider.use_request_settings(ProviderRetrySettings.model_validate({"maxRetries": 2}))
        agent = make_agent(tmp_path, [], provider=provider)

        async def scenario(t):
            await t.type("go" + ENTER)
            await t.printed("503 upstream overloaded — resending in 0.001s (1/2)")
            await t.printed("Recovered after a resend")
            await t.idle()

        terminal = run_terminal(agent, scenario)
    flat = terminal.flat()
    assert flat.index("resending in") < flat.index("Recovered after a resend")
    assert len(server.requests) == 2
