import json
from pathlib import Path

import recent_turns
from ctxmodes import UserMessage
from ctxmodes.testing import ModeConformance

SCRIPT = json.loads((Path(__file__).parent / "script.json").read_text())


class TestRecentTurns(ModeConformance):
    plugin = recent_turns
    mode_name = "recent-turns"


def test_the_model_sees_only_the_latest_turns(ctx_host):
    host = ctx_host(
        SCRIPT["responses"],
        plugins=[recent_turns],
        mode="recent-turns",
        mode_settings={"turns": 2},
    )
    for prompt in ("one", "two", "three"):
        host.prompt(prompt)
    last = host.requests()[-1]
    prompts = [m.content for m in last.messages if isinstance(m, UserMessage)]
    assert [p if isinstance(p, str) else p[0].text for p in prompts] == ["two", "three"]
