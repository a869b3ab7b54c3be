"""Random sessions: the store agrees with a plain transcription of Pi's algorithm."""

from __future__ import annotations

import copy
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability

# ----------------------------------------------------------------- reference implementation


def _ms(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)


def ref_path(entries: list[dict[str, Any]], leaf: str | None) -> list[dict[str, Any]]:
    by_id = {entry["id"]: entry for entry in entries}
    path: list[dict[str, Any]] = []
    current = by_id.get(leaf) if leaf is not None else None
    while current is not None:
        path.insert(0, current)
        parent = current["parentId"]
        current = by_id.get(parent) if parent else None
    return path


def ref_context_entries(path: list[dict[str, Any]]) -> list[dict[str, Any]]:
    compactions = [i for i, entry in enumerate(path) if entry["type"] == "compaction"]
    if not compactions:
        return path
    at = compactions[-1]
    compaction = path[at]
    kept_from = next(
        (i for i in range(at) if path[i]["id"] == compaction["firstKeptEntryId"]), None
    )
    kept = path[kept_from:at] if kept_from is not None else []
    return [compaction, *kept, *path[at + 1 :]]


def ref_message(entry: dict[str, Any]) -> list[dict[str, Any]]:
    kind = entry["type"]
    if kind == "message":
        return [entry["message"]]
    if kind == "custom_message":
        message = {
            "role": "custom",
            "customType": entry["customType"],
            "content": entry["content"],
            "display": entry["display"],
        }
        if "details" in entry:
            message["details"] = entry["details"]
        message["timestamp"] = _ms(entry["timestamp"])
        return [message]
    if kind == "branch_summary" and entry["summary"]:
        return [
            {
                "role": "branchSummary",
                "summary": entry["summary"],
                "fromId": entry["fromId"],
                "timestamp": _ms(entry["timestamp"]),
            }
        ]
    if kind == "compaction":
        return [
            {
                "role": "compactionSummary",
                "summary": entry["summary"],
                "tokensBefore": entry["tokensBefore"],
                "timestamp": _ms(entry["timestamp"]),
            }
        ]
    return []


def ref_context(entries: list[dict[str, Any]], leaf: str | None) -> dict[str, Any]:
    path = ref_path(entries, leaf)
    thinking = "off"
    model = None
    for entry in path:
        if entry["type"] == "thinking_level_change":
            thinking = entry["thinkingLevel"]
        elif entry["type"] == "model_change":
            model = {"provider": entry["provider"], "modelId": entry["modelId"]}
        elif entry["type"] == "message" and entry["message"]["role"] == "assistant":
            model = {"provider": entry["message"]["provider"], "modelId": entry["message"]["model"]}
    messages = [m for entry in ref_context_entries(path) for m in ref_message(entry)]
    return {
        "branchIds": [entry["id"] for entry in path],
        "contextEntryIds": [entry["id"] for entry in ref_context_entries(path)],
        "context": {"messages": messages, "thinkingLevel": thinking, "model": model},
    }


# ----------------------------------------------------------------- random operations

OPERATIONS = st.sampled_from(
    [
        "user",
        "user",
        "assistant",
        "assistant",
        "tool",
        "thinking",
        "model",
        "compaction",
        "label",
        "info",
        "custom",
        "custom_message",
        "branch",
        "branch",
        "reset",
        "branch_summary",
        "bash",
    ]
)


def _assistant(model: str, text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "p",
        "model": model,
        "usage": {
            "input": 1,
            "output": 1,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 2,
            "cost": {
                "input": 0.1,
                "output": 0.2,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": 0.30000000000000004,
            },
        },
        "stopReason": "stop",
        "timestamp": 5,
    }


def apply(manager: SessionManager, operation: str, data: st.DataObject, step: int) -> None:
    ids = [entry.id for entry in manager.get_entries()]

    def pick() -> str:
        return data.draw(st.sampled_from(ids))

    if operation == "user":
        manager.append_message({"role": "user", "content": f"u{step}", "timestamp": step})
    elif operation == "assistant":
        manager.append_message(_assistant(data.draw(st.sampled_from(["m1", "m2"])), f"a{step}"))
    elif operation == "tool":
        manager.append_message(
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": [{"type": "text", "text": "r"}],
                "isError": False,
                "timestamp": step,
            }
        )
    elif operation == "thinking":
        manager.append_thinking_level_change(data.draw(st.sampled_from(["low", "high"])))
    elif operation == "model":
        manager.append_model_change("q", f"model{step}")
    elif operation == "compaction":
        target = pick() if ids and data.draw(st.booleans()) else "missing-id"
        manager.append_compaction(f"summary {step}", target, step)
    elif operation == "label" and ids:
        manager.append_label(pick(), data.draw(st.sampled_from(["A", "B", None])))
    elif operation == "info":
        manager.append_session_info(f"name {step}")
    elif operation == "custom":
        manager.append_custom_entry("ext", {"step": step})
    elif operation == "custom_message":
        manager.append_custom_message_entry("ext", f"c{step}", data.draw(st.booleans()))
    elif operation == "branch" and ids:
        manager.branch(pick())
    elif operation == "reset":
        manager.reset_leaf()
    elif operation == "branch_summary":
        target = pick() if ids and data.draw(st.booleans()) else None
        manager.branch_with_summary(target, data.draw(st.sampled_from(["", "went away"])))
    elif operation == "bash":
        manager.append_message(
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "x",
                "exitCode": 1,
                "cancelled": False,
                "truncated": False,
                "timestamp": step,
                "excludeFromContext": data.draw(st.booleans()),
            }
        )


def _state(manager: SessionManager, leaf: str | None) -> dict[str, Any]:
    position = manager.position_at(leaf)
    return {
        "branchIds": position.branch_ids,
        "contextEntryIds": position.context_entry_ids,
        "context": position.context.to_json(),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPERATIONS, min_size=1, max_size=40), st.data())
def test_random_sessions_match_the_reference(operations: list[str], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        manager = SessionManager.create(scratch, scratch, durability=Durability.NONE)
        for step, operation in enumerate(operations):
            apply(manager, operation, data, step)
            entries = [
                copy.deepcopy(manager.get_entry_json(entry.id)) for entry in manager.get_entries()
            ]
            leaf = manager.get_leaf_id()
            current = manager.current_position()
            assert current.leaf_id == leaf
            assert {
                "branchIds": current.branch_ids,
                "contextEntryIds": current.context_entry_ids,
                "context": current.context.to_json(),
            } == ref_context(entries, leaf)
        path = manager.session_file
        manager.close()
        if path is None or not path.exists():
            return
        with SessionManager.open(path, read_only=True) as reopened:
            entries = [reopened.get_entry_json(entry.id) for entry in reopened.get_entries()]
            assert entries == [e for e in entries if e is not None]
            last = entries[-1]["id"] if entries else None  # type: ignore[index]
            assert reopened.get_leaf_id() == last
            for entry_id in [None, *(entry["id"] for entry in entries)]:  # type: ignore[index]
                assert _state(reopened, entry_id) == ref_context(entries, entry_id)  # type: ignore[arg-type]


def test_reference_agrees_with_pis_own_answers(oracle_cases: Path) -> None:
    # The reference is only trustworthy if it reproduces the oracle too.
    import json

    from ctxmodes.session import codec

    for name in ("random_tree_a", "random_tree_b", "compaction_multiple", "labels"):
        records = [
            codec.loads(line) for line in (oracle_cases / f"{name}.jsonl").read_bytes().splitlines()
        ]
        expected = json.loads((oracle_cases / f"{name}.expected.json").read_text())
        entries = records[1:]
        for entry_id, light in expected["allPositions"].items():
            state = ref_context(entries, entry_id)
            assert state["branchIds"] == light["branchIds"]
            assert state["contextEntryIds"] == light["contextEntryIds"]
            assert len(state["context"]["messages"]) == light["messageCount"]
