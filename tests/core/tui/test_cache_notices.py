"""The cache-miss and summary-bill notices (``terminal.cache_miss_notices``): their words,
live and on reopening, and nothing while they are off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from support.agents import make_agent
from support.terminal import ENTER, run_terminal
from support.usages import priced_usage

from ctxmodes.config import TerminalSettings
from ctxmodes.host.usage_breakdown import CacheMiss
from ctxmodes.tui.cache_notices import miss_notice
from ctxmodes.tui.usage_totals import pi_tokens


@pytest.mark.parametrize(
    ("miss", "said"),
    [
        (CacheMiss(30_000, 0.081, 1_000, False), "Cache miss: 30k tokens re-billed (~$0.08)"),
        (
            CacheMiss(5_000, 0.25, 0, True),
            "Cache miss after model switch: 5.0k tokens re-billed (~$0.25)",
        ),
        (
            CacheMiss(25_000, 0.004, 450_000, False),
            "Cache miss after 8m idle: 25k tokens re-billed",
        ),
        # Both small: not worth a line.
        (CacheMiss(19_999, 0.099, 0, True), None),
    ],
)
def test_a_miss_is_said_in_pi_s_words(miss: CacheMiss, said: str | None) -> None:
    assert miss_notice(miss) == said


def _reply(text: str, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "scripted",
        "provider": "scripted",
        "model": "scripted",
        "usage": usage,
        "stopReason": "stop",
        "timestamp": 1,
    }


def _session_with_a_miss(directory: Path, *, long: bool = False):
    agent = make_agent(directory, [{"text": "the summary"}])
    manager = agent.session_manager
    # Long prompts leave Pi's 20,000 recent tokens something to summarize before them.
    words = " many words" * 20_000 if long else ""
    manager.append_message({"role": "user", "content": "first" + words, "timestamp": 1})
    manager.append_message(_reply("first answer", priced_usage(10_000, read=30_000)))
    manager.append_message({"role": "user", "content": "again" + words, "timestamp": 1})
    # Sent before, all 40,000 of it, and not read from the cache this time.
    manager.append_message(_reply("second answer", priced_usage(41_000)))
    return agent


def test_reopening_shows_the_miss_after_its_reply(tmp_path: Path) -> None:
    agent = _session_with_a_miss(tmp_path)

    async def scenario(t):
        await t.printed("second answer")

    settings = TerminalSettings(cache_miss_notices=True)
    text = run_terminal(agent, scenario, settings=settings).text()
    reply_at = text.index("second answer")
    # Its 40,000 tokens paid at the input price, the cache-read price of a model that has
    # none being 0.
    assert text.index("Cache miss: 40k tokens re-billed (~$0.12)") > reply_at


def test_nothing_is_said_while_the_notices_are_off(tmp_path: Path) -> None:
    agent = _session_with_a_miss(tmp_path)

    async def scenario(t):
        await t.printed("second answer")

    assert "re-billed" not in run_terminal(agent, scenario).text()


def test_a_compaction_says_what_it_was_billed(tmp_path: Path) -> None:
    agent = _session_with_a_miss(tmp_path, long=True)

    async def scenario(t):
        await t.type("/compact" + ENTER)
        await t.printed("Compacted from")
        await t.printed("Compaction: ")

    # Nothing replayed: the long prompt is not drawn.
    settings = TerminalSettings(cache_miss_notices=True, replay_turns=0)
    text = run_terminal(agent, scenario, settings=settings).text()
    lines = agent.session_file.read_bytes().splitlines()
    compaction = next(e for e in map(orjson.loads, lines) if e["type"] == "compaction")
    usage = compaction["usage"]
    billed = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    assert billed > 1_000
    assert f"Compaction: {pi_tokens(billed)} tokens billed" in text
