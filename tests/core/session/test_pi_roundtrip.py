"""Files written by ctxmodes, opened by the real Pi 0.85: Pi must see what ctxmodes sees."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import PiOracle, tree_without_repeats

from ctxmodes.session import codec
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.writer import Durability, SessionWriter

pytestmark = pytest.mark.pi

Snapshot = Callable[[SessionManager, list[str | None]], dict[str, Any]]
MAX_POSITIONS = 250


def _positions(manager: SessionManager) -> list[str | None]:
    ids = [entry.id for entry in manager.get_entries()]
    return [None, *ids] if len(ids) <= MAX_POSITIONS else [None, ids[0], ids[len(ids) // 2]]


def _rewrite(source: Path, target: Path) -> None:
    """Re-encode every record of ``source`` with ctxmodes into a new file ``target``."""
    with SessionManager.open(source, read_only=True) as manager:
        header = codec.dumps_line(manager.get_header_json())
        body = b"".join(
            codec.dumps_line(manager.get_entry_json(entry.id) or {})
            for entry in manager.get_entries()
        )
    SessionWriter.create(target, header + body, Durability.FLUSH).close()


def test_rewritten_oracle_cases_open_identically_in_pi(
    tmp_path: Path, oracle_cases: Path, pi: PiOracle, session_snapshot: Snapshot
) -> None:
    requests: list[dict[str, Any]] = []
    ours: list[dict[str, Any]] = []
    for source in sorted(oracle_cases.glob("*.jsonl")):
        if source.name == "foreign_no_header.jsonl" or source.name.endswith("duplicate_ids.jsonl"):
            continue
        copy = tmp_path / source.name
        _rewrite(source, copy)
        with SessionManager.open(copy, read_only=True) as manager:
            positions = _positions(manager)
            ours.append(session_snapshot(manager, positions))
        requests.append({"file": str(copy), "at": positions})
    answers = pi.open_many(requests)
    assert len(answers) == len(ours) > 40
    for request, answer, mine in zip(requests, answers, ours, strict=True):
        assert answer == mine, request["file"]
        # Pi did not have to repair or migrate anything we wrote.
        assert Path(request["file"]).read_bytes().endswith(b"\n")


def test_rewritten_cases_keep_pis_original_answers(
    tmp_path: Path, oracle_cases: Path, expected: Callable[[str, str], Any], pi: PiOracle
) -> None:
    names = ["random_tree_a", "compaction_with_labels_and_meta", "linear_thinking_tools"]
    requests = []
    for name in names:
        copy = tmp_path / f"{name}.jsonl"
        _rewrite(oracle_cases / f"{name}.jsonl", copy)
        requests.append({"file": str(copy)})
    for name, answer in zip(names, pi.open_many(requests), strict=True):
        want = expected(name, "expected")
        for key in ("leafId", "branchIds", "contextEntryIds", "context", "tree", "header"):
            assert answer[key] == want[key], (name, key)


def _build_random_session(directory: Path, seed: int) -> Path:
    rng = random.Random(seed)
    with SessionManager.create(directory, directory, durability=Durability.FLUSH) as manager:
        manager.append_model_change("anthropic", "claude-sonnet-4-5")
        manager.append_thinking_level_change("medium")
        for step in range(rng.randint(20, 80)):
            ids = manager.get_branch_ids() or [None]
            roll = rng.random()
            if roll < 0.3:
                manager.append_message(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": f"q{step} é \u2028"}],
                        "timestamp": 1_700_000_000_000 + step,
                    }
                )
            elif roll < 0.55:
                manager.append_message(
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "thinking", "thinking": "t"},
                            {"type": "text", "text": f"a{step}"},
                            {
                                "type": "toolCall",
                                "id": f"c{step}",
                                "name": "read",
                                "arguments": {"path": "x", "10": 1, "2": [0.1, -0.0, 1e21]},
                            },
                        ],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": rng.choice(["m1", "m2"]),
                        "usage": {
                            "input": 3,
                            "output": 4,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "totalTokens": 7,
                            "cost": {
                                "input": 3e-6,
                                "output": 6e-5,
                                "cacheRead": 0,
                                "cacheWrite": 0,
                                "total": 6.3e-5,
                            },
                        },
                        "stopReason": "toolUse",
                        "timestamp": 1_700_000_000_000 + step,
                    }
                )
            elif roll < 0.65:
                manager.append_message(
                    {
                        "role": "toolResult",
                        "toolCallId": f"c{step}",
                        "toolName": "read",
                        "content": [{"type": "text", "text": "r\x00\ud800"}],
                        "details": {"n": step},
                        "isError": False,
                        "timestamp": step,
                    }
                )
            elif roll < 0.7:
                manager.append_compaction(
                    f"summary {step}",
                    rng.choice(ids) or "x",
                    1000 + step,
                    {"readFiles": ["a"], "modifiedFiles": []},
                    False,
                )
            elif roll < 0.75:
                target = manager.get_entries()[rng.randrange(manager.entry_count())].id
                manager.branch(target)
            elif roll < 0.8:
                target = manager.get_entries()[rng.randrange(manager.entry_count())].id
                manager.append_label(target, rng.choice(["L", None]))
            elif roll < 0.85:
                branch_from = manager.get_entries()[rng.randrange(manager.entry_count())].id
                manager.branch_with_summary(
                    branch_from,
                    rng.choice(["", "came back"]),
                    {"readFiles": [], "modifiedFiles": ["b"]},
                    True,
                )
            elif roll < 0.88:
                manager.append_custom_message_entry(
                    "ext",
                    rng.choice(["text", [{"type": "text", "text": "blocks"}]]),
                    rng.random() < 0.5,
                    {"x": 1},
                )
            elif roll < 0.91:
                manager.append_custom_entry("ext", {"state": step})
            elif roll < 0.94:
                manager.append_session_info(f"name\n{step}")
            elif roll < 0.97:
                manager.append_message(
                    {
                        "role": "bashExecution",
                        "command": "make",
                        "output": "boom",
                        "exitCode": 2,
                        "cancelled": False,
                        "truncated": True,
                        "fullOutputPath": "/tmp/out",
                        "timestamp": step,
                    }
                )
            else:
                manager.reset_leaf()
        path = manager.session_file
    assert path is not None
    return path


def test_sessions_built_with_the_api_open_identically_in_pi(
    tmp_path: Path, pi: PiOracle, session_snapshot: Snapshot
) -> None:
    paths = [_build_random_session(tmp_path / f"s{seed}", seed) for seed in range(12)]
    ours = []
    requests = []
    for path in paths:
        with SessionManager.open(path, read_only=True) as manager:
            positions = _positions(manager)
            ours.append(session_snapshot(manager, positions))
        requests.append({"file": str(path), "at": positions})
    for request, answer, mine in zip(requests, pi.open_many(requests), ours, strict=True):
        assert json.dumps(answer, sort_keys=True) == json.dumps(mine, sort_keys=True), request


def _odd_session() -> bytes:
    """A hand-written file full of records Pi never writes but still opens."""
    usage = {
        "input": 1,
        "output": 1,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 2,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }

    def entry(kind: str, entry_id: str, parent: Any, **fields: Any) -> dict[str, Any]:
        record = {"type": kind, "id": entry_id, "timestamp": "2025-01-01T00:00:01.000Z"}
        if parent is not ...:
            record["parentId"] = parent
        record.update(fields)
        return record

    def message(entry_id: str, parent: Any, **fields: Any) -> dict[str, Any]:
        return entry("message", entry_id, parent, message={"timestamp": 1, **fields})

    records: list[Any] = [
        {
            "type": "session",
            "version": 3,
            "id": "odd",
            "timestamp": "2025-01-01T00:00:00.000Z",
            "cwd": "/odd",
        },
        message("u1", None, role="user", content="hello \ud800 é \u2028"),
        message(
            "a1",
            "u1",
            role="assistant",
            content=[{"type": "text", "text": "x"}],
            api="a",
            model="m",
            usage=usage,
            stopReason="stop",
        ),
        entry("model_change", "mc", "a1", provider="p"),
        entry("thinking_level_change", "tl", "mc"),
        message("nul", "tl", role="user", content=None),
        entry("custom_message", "cm", "nul", customType="x", display=True),
        entry(
            "custom_message",
            "cm2",
            "cm",
            customType="x",
            content=None,
            display=False,
            timestamp="nonsense",
        ),
        entry("branch_summary", "bs", "cm2", fromId="zz", summary=""),
        entry("session_info", "si", "bs", name="   "),
        entry("compaction", "c1", "si", summary="S", firstKeptEntryId="nowhere", tokensBefore=3),
        entry("label", "l1", "c1", targetId="u1", label=5),
        entry("label", "l2", "l1", targetId="ghost", label="dangling"),
        entry(5, "weird", "l2"),
        entry(
            "message",
            "orphan",
            "missing-parent",
            message={"role": "user", "content": "o", "timestamp": 2},
        ),
        message("noparent", ..., role="user", content="p"),
        message("emptyparent", "", role="user", content="e"),
        message("dup", "u1", role="user", content="first"),
        message("child", "dup", role="user", content="child"),
        message("dup", "a1", role="user", content="second"),
        b"\r\n",
        b'{"type":"message","id":"nan","parentId":"child","v":NaN}\n',
        b'{"type":"session","version":3,"id":"again"}\n',
        message("late", "child", role="user", content="late"),
    ]
    body = b"".join(
        record if isinstance(record, bytes) else codec.dumps_line(record) for record in records
    )
    return body + b'{"type":"message","id":"torn"'


def test_odd_files_open_as_in_pi(tmp_path: Path, pi: PiOracle, session_snapshot: Snapshot) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(_odd_session())
    with SessionManager.open(path, read_only=True) as manager:
        positions = _positions(manager)
        ours = session_snapshot(manager, positions)
        assert manager.skipped_lines
    (answer,) = pi.open_many([{"file": str(path), "at": positions}])
    answer["tree"] = tree_without_repeats(answer["tree"])
    assert json.dumps(answer, sort_keys=True) == json.dumps(ours, sort_keys=True)
