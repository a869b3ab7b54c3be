"""The footer's token figures and cost, summed over a session as Pi's footer sums them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.session.manager import SessionManager
from ctxmodes.tui.usage_totals import SessionUsage, pi_tokens


def usage(input: int, output: int, read: int = 0, write: int = 0, cost: float = 0.0) -> Any:
    return {
        "input": input,
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": input + output + read + write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


def reply(spent: Any, stop: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "api": "openai-completions",
        "provider": "loop",
        "model": "m",
        "usage": spent,
        "stopReason": stop,
        "timestamp": 1,
    }


def prompt(manager: SessionManager) -> str:
    return manager.append_message({"role": "user", "content": "q", "timestamp": 1})


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (0, "0"),
        (999, "999"),
        (1_000, "1.0k"),
        (1_250, "1.3k"),
        (2_250, "2.3k"),
        (9_949, "9.9k"),
        (9_999, "10.0k"),
        (10_000, "10k"),
        (45_499, "45k"),
        (44_500, "45k"),
        (999_499, "999k"),
        (999_999, "1000k"),
        (1_000_000, "1.0M"),
        (9_960_000, "10.0M"),
        (12_500_000, "13M"),
    ],
)
def test_counts_are_written_as_pis_footer_writes_them(count: int, shown: str) -> None:
    # Pi's formatTokens: toFixed(1) below ten thousand and ten million, Math.round above.
    assert pi_tokens(count) == shown


@pytest.mark.pi
def test_counts_are_written_as_pis_own_footer_writes_them() -> None:
    rng = random.Random(7)
    ties = [whole * 1_000 + 250 * part for whole in range(1, 12) for part in range(4)]
    scales = [
        rng.randrange(10**digits, 10 ** (digits + 1)) for digits in range(9) for _ in range(60)
    ]
    counts = sorted({*ties, *(tie * 1_000 for tie in ties), *scales, 9_999_999, 10_000_000})
    script = Path(__file__).parents[2] / "support" / "pi_format_tokens.mjs"
    assert run_pi_script(script, stdin=json.dumps(counts)) == [pi_tokens(c) for c in counts]


def test_every_reply_summary_and_tool_result_counts_as_in_pi() -> None:
    manager = SessionManager.in_memory("/p")
    tracked = SessionUsage()
    assert tracked.update(manager).stats() == ""
    first = prompt(manager)
    manager.append_message(reply(usage(4_000, 340, read=8_000, cost=0.01)))
    # A reply stopped half way was still paid for.
    prompt(manager)
    manager.append_message(reply(usage(1_000, 60, write=2_000, cost=0.02), stop="aborted"))
    manager.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "ask",
            "content": [{"type": "text", "text": "done"}],
            "isError": False,
            "usage": usage(500, 20, cost=0.001),
            "timestamp": 1,
        }
    )
    manager.append_compaction("summary", first, 9_000, usage=usage(3_000, 400, cost=0.004))
    manager.branch_with_summary(first, "left", usage=usage(200, 30, cost=0.0005))
    totals = tracked.update(manager)
    assert (totals.tokens.input, totals.tokens.output) == (8_700, 850)
    assert (totals.tokens.cache_read, totals.tokens.cache_write) == (8_000, 2_000)
    assert totals.cost == pytest.approx(0.0355)
    # The cache hit rate is the last reply's: 0 read of its 3,000 prompt tokens.
    assert totals.stats() == "↑8.7k ↓850 R8.0k W2.0k CH0.0%"


def test_only_entries_appended_since_are_read_and_a_new_session_starts_afresh() -> None:
    manager = SessionManager.in_memory("/p")
    tracked = SessionUsage()
    prompt(manager)
    manager.append_message(reply(usage(100, 10, read=300)))
    assert tracked.update(manager).stats() == "↑100 ↓10 R300 CH75.0%"
    prompt(manager)
    manager.append_message(reply(usage(50, 5)))
    # The last reply read nothing from the cache, and had a prompt: its rate is 0.
    assert tracked.update(manager).stats() == "↑150 ↓15 R300 CH0.0%"
    other = SessionManager.in_memory("/p")
    prompt(other)
    other.append_message(reply(usage(7, 1)))
    assert tracked.update(other).stats() == "↑7 ↓1"


def test_a_reply_without_prompt_tokens_has_no_cache_rate() -> None:
    manager = SessionManager.in_memory("/p")
    tracked = SessionUsage()
    prompt(manager)
    manager.append_message(reply(usage(100, 10, read=300)))
    prompt(manager)
    manager.append_message(reply(usage(0, 10)))
    assert tracked.update(manager).stats() == "↑100 ↓20 R300"


def test_a_cache_rate_on_a_tie_is_written_as_javascript_writes_it() -> None:
    manager = SessionManager.in_memory("/p")
    prompt(manager)
    # 49 of 400 prompt tokens from the cache: exactly 12.25 %, which ``toFixed(1)`` writes
    # 12.3 (Python's formatting would write 12.2).
    manager.append_message(reply(usage(351, 1, read=49)))
    assert SessionUsage().update(manager).stats() == "↑351 ↓1 R49 CH12.3%"
