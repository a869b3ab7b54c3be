"""Properties of the cut point, checked on random branches against a plain reference.

Token counts are computed here from the text sizes the branch was built with, independently
of the estimator under test.
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctxmodes.compaction import CompactionSettings, find_cut_point, prepare_compaction
from ctxmodes.session.models import entry_from_json, to_json

CUT_KINDS = {"user", "assistant", "bash", "custom"}
TURN_KINDS = {"user", "bash", "custom"}

kinds = st.sampled_from(
    ["user", "assistant", "assistant", "tool", "tool", "label", "bash", "custom"]
)
branches = st.lists(st.tuples(kinds, st.integers(0, 400)), min_size=1, max_size=40)
budgets = st.integers(1, 2500)


def _body(kind: str, size: int, index: int) -> dict[str, Any]:
    text = "x" * size
    if kind == "label":
        return {"type": "label", "targetId": "e0", "label": "l"}
    if kind == "custom":
        return {"type": "custom_message", "customType": "c", "content": text, "display": True}
    if kind == "user":
        message: dict[str, Any] = {"role": "user", "content": text}
    elif kind == "bash":
        message = {
            "role": "bashExecution",
            "command": "",
            "output": text,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    elif kind == "tool":
        message = {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "t",
            "content": [{"type": "text", "text": text}],
            "isError": False,
        }
    else:
        cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        usage = {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": cost,
        }
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "a",
            "provider": "p",
            "model": "m",
            "usage": usage,
            "stopReason": "stop",
        }
    return {"type": "message", "message": {**message, "timestamp": index}}


def _entries(spec: list[tuple[str, int]]) -> list[Any]:
    entries = []
    for index, (kind, size) in enumerate(spec):
        stored = {
            **_body(kind, size, index),
            "id": f"e{index}",
            "parentId": f"e{index - 1}" if index else None,
            "timestamp": "2025-01-01T00:00:00.000Z",
        }
        entries.append(entry_from_json(stored))
    return entries


def _tokens(spec: list[tuple[str, int]], start: int) -> int:
    return sum(-(-size // 4) for kind, size in spec[start:] if kind != "label")


@settings(max_examples=150, deadline=None)
@given(branches, budgets)
def test_the_cut_keeps_the_budget_and_no_more(spec, keep):
    entries = _entries(spec)
    cut = find_cut_point(entries, 0, len(entries), keep)
    kinds = [kind for kind, _ in spec]
    cut_points = [i for i, kind in enumerate(kinds) if kind in CUT_KINDS]
    c = cut.first_kept_entry_index
    if not cut_points:
        assert (c, cut.turn_start_index, cut.is_split_turn) == (0, -1, False)
        return
    # Labels right before the first kept message stay with it; nothing else is skipped.
    visible = next(i for i in range(c, len(kinds)) if kinds[i] != "label")
    assert c == 0 or kinds[c - 1] != "label"
    # Never a tool result: it has to follow its call.
    assert kinds[visible] in CUT_KINDS
    earlier = [p for p in cut_points if p < visible]
    later = [q for q in cut_points if q > visible]
    if _tokens(spec, visible) < keep and earlier:
        # Keeping less is only allowed when one more turn back would exceed the budget.
        assert _tokens(spec, earlier[-1]) >= keep
    if _tokens(spec, cut_points[-1] + 1) >= keep:
        # Trailing tool results alone exhaust the budget: there is no valid cut, keep all.
        assert visible == cut_points[0]
    else:
        assert all(_tokens(spec, q) < keep for q in later)
    # A cut that does not start a turn splits the turn that contains it.
    turn_starts = [i for i in range(c + 1) if kinds[i] in TURN_KINDS]
    if kinds[c] in TURN_KINDS:
        assert (cut.turn_start_index, cut.is_split_turn) == (-1, False)
    else:
        assert cut.turn_start_index == (turn_starts[-1] if turn_starts else -1)
        assert cut.is_split_turn == bool(turn_starts)


@settings(max_examples=80, deadline=None)
@given(branches, budgets, budgets)
def test_a_larger_budget_never_keeps_less(spec, first, second):
    entries = _entries(spec)
    small, large = sorted((first, second))
    cut_points = [i for i, (kind, _) in enumerate(spec) if kind in CUT_KINDS]
    # Exception (as in Pi): when trailing tool results alone use up the smaller budget there
    # is no valid cut for it, and everything is kept.
    assume(cut_points and _tokens(spec, cut_points[-1] + 1) < small)
    cut_small = find_cut_point(entries, 0, len(entries), small).first_kept_entry_index
    cut_large = find_cut_point(entries, 0, len(entries), large).first_kept_entry_index
    assert cut_large <= cut_small


@settings(max_examples=80, deadline=None)
@given(branches, budgets)
def test_summarized_and_kept_messages_partition_the_branch(spec, keep):
    entries = _entries(spec)
    prepared = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=keep))
    messages = [to_json(e)["message"] for e in entries if e.type == "message"]
    if prepared is None:
        return
    first_kept = next(i for i, e in enumerate(entries) if e.id == prepared.first_kept_entry_id)
    kept = [to_json(e)["message"] for e in entries[first_kept:] if e.type == "message"]
    summarized = [to_json(m) for m in prepared.messages_to_summarize]
    prefix = [to_json(m) for m in prepared.turn_prefix_messages]
    without_custom = [m for m in summarized + prefix if m["role"] != "custom"]
    assert without_custom + kept == messages
    assert bool(prefix) <= prepared.is_split_turn
