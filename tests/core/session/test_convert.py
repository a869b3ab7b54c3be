from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.session.convert import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    bash_execution_to_text,
    convert_to_llm,
    convert_to_llm_json,
)
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import (
    CompactionSummaryMessage,
    CustomMessage,
    UnknownMessage,
    UserMessage,
    message_from_json,
    to_json,
)


def _wrapped_texts(llm: list[dict[str, Any]]) -> list[str]:
    return [
        block["text"]
        for message in llm
        for block in message.get("content", [])
        if isinstance(block, dict) and block.get("type") == "text"
    ]


def test_wrapper_strings_are_pis(oracle_cases: Path, expected: Callable[[str, str], Any]) -> None:
    texts = _wrapped_texts(expected("compaction_multiple", "llm")["leaf"])
    texts += _wrapped_texts(expected("branch_with_summary", "llm")["leaf"])
    compactions = [t for t in texts if t.startswith(COMPACTION_SUMMARY_PREFIX)]
    branches = [t for t in texts if t.startswith(BRANCH_SUMMARY_PREFIX)]
    assert compactions
    assert all(t.endswith(COMPACTION_SUMMARY_SUFFIX) for t in compactions)
    assert branches
    assert all(t.endswith(BRANCH_SUMMARY_SUFFIX) for t in branches)


def test_bash_execution_texts_match_pi(
    oracle_cases: Path, expected: Callable[[str, str], Any]
) -> None:
    with SessionManager.open(oracle_cases / "bash_execution.jsonl", read_only=True) as manager:
        messages = list(manager.build_session_context().message_json)
    bash = [m for m in messages if m["role"] == "bashExecution"]
    assert bash
    assert convert_to_llm_json(messages) == expected("bash_execution", "llm")["leaf"]


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"command": "ls", "output": "", "exitCode": 0}, "Ran `ls`\n(no output)"),
        (
            {"command": "ls", "output": "a", "exitCode": 2},
            "Ran `ls`\n```\na\n```\n\nCommand exited with code 2",
        ),
        (
            {"command": "x", "output": "o", "cancelled": True, "exitCode": 1},
            "Ran `x`\n```\no\n```\n\n(command cancelled)",
        ),
        (
            {"command": "x", "output": "o", "truncated": True, "fullOutputPath": "/f"},
            "Ran `x`\n```\no\n```\n\n[Output truncated. Full output: /f]",
        ),
        (
            {"command": "x", "output": "o", "exitCode": False},
            "Ran `x`\n```\no\n```\n\nCommand exited with code false",
        ),
        ({"output": "o", "exitCode": 0.0}, "Ran `undefined`\n```\no\n```"),
        (
            {"command": "x", "output": "o", "exitCode": 1.5},
            "Ran `x`\n```\no\n```\n\nCommand exited with code 1.5",
        ),
    ],
)
def test_bash_execution_text(message: dict[str, Any], text: str) -> None:
    assert bash_execution_to_text({"role": "bashExecution", **message}) == text


def test_excluded_bash_and_unknown_roles_are_dropped() -> None:
    messages = [
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "excludeFromContext": True,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1,
        },
        {"role": "mystery", "timestamp": 1},
        {"role": "custom", "customType": "x", "content": "hello", "display": False, "timestamp": 3},
        {"role": "custom", "customType": "x", "display": False},
    ]
    assert convert_to_llm_json(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 3},
        {"role": "user"},
    ]


def test_model_conversion_passes_llm_roles_through() -> None:
    user = UserMessage(content="hi", timestamp=1)
    summary = CompactionSummaryMessage(summary="S", tokens_before=3, timestamp=None)
    odd_user = message_from_json({"role": "user", "content": 5, "timestamp": 1})
    assert isinstance(odd_user, UnknownMessage)
    custom = CustomMessage(custom_type="x", content="c", display=True, timestamp=2)
    out = convert_to_llm([user, summary, odd_user, custom, message_from_json({"role": "zzz"})])
    assert out[0] is user
    assert to_json(out[1]) == {
        "role": "user",
        "content": [
            {"type": "text", "text": COMPACTION_SUMMARY_PREFIX + "S" + COMPACTION_SUMMARY_SUFFIX}
        ],
        "timestamp": None,
    }
    assert out[2] is odd_user
    assert to_json(out[3]) == {
        "role": "user",
        "content": [{"type": "text", "text": "c"}],
        "timestamp": 2,
    }
    assert len(out) == 4
