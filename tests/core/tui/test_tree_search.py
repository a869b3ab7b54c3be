"""What typing in ``/tree`` searches: each entry's searchable text, judged entry by entry by the
real Pi's tree selector over the same file, and how a query splits into words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes.session.manager import SessionManager
from ctxmodes.tui.tree_search import matches, query_words, searchable_text

SCRIPT = Path(__file__).parents[2] / "support" / "pi_tree_selector.mjs"
REPLY = {
    "api": "openai-responses",
    "provider": "openai",
    "model": "gpt-5",
    "usage": {"input": 0, "output": 0, "totalTokens": 0},
    "timestamp": 2,
}
#: One entry of every type Pi searches, some with fields missing, null or not text.
ENTRIES: list[dict[str, Any]] = [
    # The emoji straddles the 200th code unit: half of it is searched, the word after not.
    {"type": "message", "message": {"role": "user", "content": "x" * 199 + "😀 TAILWORD"}},
    {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Hello "},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}},
                {"type": "text", "text": "WORLD"},
            ],
            "stopReason": "toolUse",
            **REPLY,
        },
    },
    {
        "type": "message",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [
                {"type": "text"},
                {"type": "text", "text": None},
                {"type": "text", "text": 7},
            ],
            "isError": False,
            "timestamp": 3,
        },
    },
    {
        "type": "message",
        "message": {
            "role": "bashExecution",
            "command": "make Check",
            "output": "ok",
            "timestamp": 4,
        },
    },
    {"type": "message", "message": {"role": "user", "content": "", "timestamp": 5}},
    {"type": "message", "message": {"role": "user", "content": [], "timestamp": 6}},
    {
        "type": "custom_message",
        "customType": "Note-Kind",
        "content": "İstanbul ΟΔΟΣ",
        "display": True,
    },
    {
        "type": "custom_message",
        "content": [{"type": "text", "text": "array form"}],
        "display": True,
    },
    {"type": "compaction", "summary": "not searched", "firstKeptEntryId": "e0", "tokensBefore": 9},
    {"type": "branch_summary", "fromId": "e0", "summary": "Went Elsewhere"},
    {"type": "session_info", "name": "My Session"},
    {"type": "session_info"},
    {"type": "model_change", "provider": "openai", "modelId": "GPT-X"},
    {"type": "thinking_level_change", "thinkingLevel": "high"},
    {"type": "custom", "customType": "state-kind", "data": {}},
    {"type": "custom", "data": 1},
    {"type": "label", "targetId": "e0", "label": "Plan B"},
    {"type": "label", "targetId": "e1", "label": "gone"},
    {"type": "label", "targetId": "e1"},
    {"type": "label", "targetId": "e3", "label": "Shell Run"},
]


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [{**header, "cwd": str(tmp_path)}]
    for index, entry in enumerate(ENTRIES):
        parent = f"e{index - 1}" if index else None
        stamp = "2026-01-01T00:00:01Z"
        lines.append({**entry, "id": f"e{index}", "parentId": parent, "timestamp": stamp})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.pi
def test_each_entry_is_searched_by_the_text_pi_searches(tmp_path: Path) -> None:
    path = _session(tmp_path)
    request = {"sessionFile": str(path), "bindings": {}, "width": 120, "keys": []}
    pis = run_pi_script(SCRIPT, json.dumps(request))["searchable"]
    manager = SessionManager.open(path, read_only=True)
    try:
        ours = {
            entry_id: searchable_text(manager.get_entry_json(entry_id), manager.get_label(entry_id))
            for entry_id in pis
        }
    finally:
        manager.close()
    assert ours == pis
    assert len(pis) == len(ENTRIES)
    # Half an emoji is kept, as Pi keeps it, and matches nothing typed.
    assert "tailword" not in ours["e0"]
    assert ours["e3"] == "shell run bashexecution make check"


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("", []),
        ("   ", []),
        ("Plan  B", ["plan", "b"]),
        (" a\u00a0b\u3000c\ufeffd ", ["a", "b", "c", "d"]),
        # Not whitespace to JavaScript, so not to Pi's search either.
        ("a\x1cb", ["a\x1cb"]),
        ("ΟΔΟΣ", ["οδος"]),
    ],
)
def test_a_query_splits_at_javascript_s_whitespace(query: str, words: list[str]) -> None:
    assert query_words(query) == words


def test_every_word_must_appear_in_any_order() -> None:
    searchable = searchable_text(
        {"type": "message", "message": {"role": "user", "content": "Beta route"}}, "Plan B"
    )
    assert matches(query_words("ROUTE plan"), searchable)
    assert matches([], searchable)
    assert not matches(query_words("route gamma"), searchable)
