"""Tree's rollover as an embedding program sees it: one ``WindowOpened`` per new window, and
a context state that says *unknown* from the marker until the next usage report."""

from __future__ import annotations

from support.agents import make_agent

from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import ContextState, SummaryStarted, UsageReported, WindowOpened

SCRIPT = {
    "responses": [
        {
            "text": "rolling over",
            "tool_calls": [{"name": "new_context"}],
            "usage": {"totalTokens": 90_000},
        },
        {"text": "window one", "usage": {"totalTokens": 3_000}},
    ]
}


def test_rollover_events_and_unknown_usage_until_the_next_report(tmp_path):
    provider = ScriptedProvider(Script.model_validate(SCRIPT))
    seen: list[object] = []
    states: list[ContextState] = []
    with make_agent(tmp_path, [], mode="tree", provider=provider) as agent:

        def listen(event: object) -> None:
            if isinstance(event, (WindowOpened, SummaryStarted, UsageReported)):
                seen.append(event)
                if isinstance(event, WindowOpened):
                    states.append(agent.context_state())

        agent.subscribe(listen)
        agent.prompt("go")
        final = agent.context_state()
    kinds = [type(event).__name__ for event in seen]
    assert kinds == [
        "WindowOpened",
        "UsageReported",
        "SummaryStarted",
        "WindowOpened",
        "UsageReported",
    ]
    assert [e.number for e in seen if isinstance(e, WindowOpened)] == [0, 1]
    assert states[1].window == 1
    assert states[1].used_tokens is None
    assert final.window == 1
    assert final.used_tokens == 3_000
