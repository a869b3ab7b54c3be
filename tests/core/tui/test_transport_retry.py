"""The terminal session shows a transport-level retry (Pi's ``retry.provider``) as a
warning while the request is resent, with the real Chat Completions transport on loopback."""

from __future__ import annotations

from support.agents import make_agent
from support.terminal import ENTER, run_terminal
from support.wire_server import WireServer, completions_provider, overloaded_then


def test_a_transport_retry_is_shown_then_the_reply(tmp_path):
    with WireServer(overloaded_then("openai-completions", "Recovered after a resend")) as server:
        provider = completions_provider(server, max_retries=2)
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
