"""Seeded random branches run through the real Pi and through ours; the answers must agree.

The oracle corpus pins down realistic sessions; this covers the corners it does not: text
outside the Basic Multilingual Plane (UTF-16 lengths, truncation inside a surrogate pair),
tool arguments with integer-like keys and JavaScript number formatting, file names sorted by
code units, budgets that cut through summaries, and malformed records on which Pi throws
(where we must raise :class:`MalformedMessageError`). All requests go to one node process.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.compaction import (
    CompactionSettings,
    FileOperations,
    MalformedMessageError,
    compute_file_lists,
    estimate_context_tokens,
    estimate_tokens,
    prepare_branch_entries,
    prepare_compaction,
    serialize_conversation,
)
from ctxmodes.session import codec
from ctxmodes.session.convert import convert_to_llm
from ctxmodes.session.models import entry_from_json, message_from_json, to_json

SCRIPT = Path(__file__).with_name("pi_compaction.mjs")
BRANCHES = 150
KEEP_RECENT = (1, 30, 200, 2000)
BUDGETS = (0, 60, 500)
CHARS = ["a", "b", " ", "\n", "\t", "é", "中", "😀", "𝄞", '"', "\\"]
TOOL_NAMES = ["read", "write", "edit", "bash", "grep"]
FILE_NAMES = ["src/a.ts", "src/B.ts", "src/é.ts", "src/😀.ts", "src/\uffee.ts", "src/b.ts", ""]


class BranchMaker:
    """Builds one random branch of stored entries (JSON), root first."""

    def __init__(self, rng: random.Random, malformed: bool) -> None:
        self.rng = rng
        self.malformed = malformed
        self.entries: list[dict[str, Any]] = []
        self.clock = 1_700_000_000_000

    def text(self) -> str:
        rng = self.rng
        if rng.random() < 0.05:
            # A surrogate pair straddling the 2,000-unit truncation point.
            return "a" * 1999 + "😀" + "tail"
        length = rng.choice([0, 1, 3, 20, 120, 700, 2100])
        return "".join(rng.choice(CHARS) for _ in range(length))

    def broken(self) -> bool:
        return self.malformed and self.rng.random() < 0.08

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        choice = rng.randrange(9 if depth < 2 else 6)
        return [
            lambda: self.text()[:30],
            lambda: rng.randrange(-5, 10**6),
            lambda: rng.choice([1.0, 0.5, -0.0, 1e21, 1.5e-7, 123.456]),
            lambda: rng.random() < 0.5,
            lambda: None,
            lambda: 2**60,
            lambda: [self.value(depth + 1) for _ in range(rng.randrange(3))],
            lambda: {"2": self.value(depth + 1), "x": 1, "10": self.value(depth + 1)},
            lambda: {"nested": self.value(depth + 1)},
        ][choice]()

    def arguments(self, name: str) -> dict[str, Any]:
        rng = self.rng
        args: dict[str, Any] = {}
        for key in rng.sample(["path", "10", "2", "command", "old", "z"], rng.randrange(1, 5)):
            args[key] = self.value()
        if name in ("read", "write", "edit") and rng.random() < 0.8:
            args["path"] = rng.choice([*FILE_NAMES, 7])
        return args

    def blocks(self, kinds: list[str]) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        for _ in range(rng.randrange(0, 4)):
            kind = rng.choice(kinds)
            if kind == "text":
                out.append({"type": "text", "text": self.text()})
            elif kind == "image":
                out.append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
            elif kind == "thinking":
                out.append({"type": "thinking", "thinking": self.text()})
            else:
                name = rng.choice(TOOL_NAMES)
                call = {"type": "toolCall", "id": f"c{len(self.entries)}", "name": name}
                if not self.broken():
                    call["arguments"] = self.arguments(name)
                out.append(call)
        if self.broken():
            out.append(rng.choice([None, 5, "loose text"]))
        return out

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        parts = [rng.randrange(0, 500) for _ in range(4)]
        cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        total = rng.choice([0, sum(parts)])
        return {
            "input": parts[0],
            "output": parts[1],
            "cacheRead": parts[2],
            "cacheWrite": parts[3],
            "totalTokens": total,
            "cost": cost,
        }

    def message(self) -> dict[str, Any]:
        rng = self.rng
        self.clock += 1000
        role = rng.choice(["user", "assistant", "assistant", "toolResult", "bashExecution"])
        if role == "user":
            content: Any = self.text() if rng.random() < 0.3 else self.blocks(["text", "image"])
            message = {"role": "user", "content": content, "timestamp": self.clock}
        elif role == "assistant":
            message = {
                "role": "assistant",
                "content": self.blocks(["text", "thinking", "toolCall", "toolCall"]),
                "api": "faux",
                "provider": "faux",
                "model": "m",
                "usage": self.usage(),
                "stopReason": rng.choice(["stop", "toolUse", "aborted", "error", "length"]),
                "timestamp": self.clock,
            }
        elif role == "toolResult":
            message = {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": self.blocks(["text", "text", "image"]),
                "isError": False,
                "timestamp": self.clock,
            }
        else:
            message = {
                "role": "bashExecution",
                "command": self.text()[:40],
                "output": self.text(),
                "exitCode": rng.choice([0, 1]),
                "cancelled": False,
                "truncated": False,
                "timestamp": self.clock,
            }
        if role != "bashExecution" and self.broken():
            message["content"] = None
        return message

    def details(self) -> dict[str, Any]:
        rng = self.rng
        return {
            "readFiles": rng.sample(FILE_NAMES, rng.randrange(3)),
            "modifiedFiles": rng.sample(FILE_NAMES, rng.randrange(3)),
        }

    def add(self, body: dict[str, Any]) -> None:
        index = len(self.entries)
        parent = self.entries[-1]["id"] if self.entries else None
        timestamp = f"2025-01-01T00:{index // 60 % 60:02d}:{index % 60:02d}.000Z"
        self.entries.append({**body, "id": f"e{index}", "parentId": parent, "timestamp": timestamp})

    def entry(self) -> None:
        rng = self.rng
        kind = rng.choices(
            ["message", "custom_message", "branch_summary", "compaction", "label", "meta"],
            weights=[70, 5, 5, 5, 5, 10],
        )[0]
        if kind == "message":
            self.add({"type": "message", "message": self.message()})
        elif kind == "custom_message":
            body: dict[str, Any] = {"type": "custom_message", "customType": "x", "display": True}
            if not self.broken():
                body["content"] = self.text() if rng.random() < 0.5 else self.blocks(["text"])
            self.add(body)
        elif kind == "branch_summary":
            body = {"type": "branch_summary", "fromId": "e0", "details": self.details()}
            if not self.broken():
                body["summary"] = rng.choice(["", self.text()])
            body["fromHook"] = rng.random() < 0.3
            self.add(body)
        elif kind == "compaction":
            earlier = [entry["id"] for entry in self.entries]
            body = {
                "type": "compaction",
                "firstKeptEntryId": rng.choice([*earlier, "missing"]) if earlier else "missing",
                "tokensBefore": 100,
                "details": self.details(),
                "fromHook": rng.random() < 0.3,
            }
            if not self.broken():
                body["summary"] = self.text()
            self.add(body)
        elif kind == "label":
            self.add({"type": "label", "targetId": "e0", "label": "l"})
        else:
            self.add(
                rng.choice(
                    [
                        {"type": "model_change", "provider": "p", "modelId": "m"},
                        {"type": "thinking_level_change", "thinkingLevel": "high"},
                        {"type": "custom", "customType": "state", "data": {"k": 1}},
                        {"type": "session_info", "name": "n"},
                    ]
                )
            )

    def build(self) -> list[dict[str, Any]]:
        for _ in range(self.rng.randrange(1, 40)):
            self.entry()
        if self.rng.random() < 0.3:
            self.entries.pop()  # sometimes end on anything, sometimes not on a compaction
        return self.entries


def _branches() -> list[list[dict[str, Any]]]:
    rng = random.Random(20250101)
    return [BranchMaker(rng, malformed=i % 3 == 0).build() for i in range(BRANCHES)]


def _messages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry["message"] for entry in entries if entry["type"] == "message"]


def _requests(branches: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []
    for entries in branches:
        messages = _messages(entries)
        requests += [{"op": "estimateTokens", "message": m} for m in messages]
        requests.append({"op": "estimateContextTokens", "messages": messages})
        requests.append({"op": "serialize", "messages": messages})
        for keep in KEEP_RECENT:
            settings = {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": keep}
            requests.append({"op": "prepareCompaction", "entries": entries, "settings": settings})
        for budget in BUDGETS:
            requests.append({"op": "prepareBranchEntries", "entries": entries, "budget": budget})
    return requests


def _ours(request: dict[str, Any]) -> dict[str, Any]:
    op = request["op"]
    try:
        if op == "estimateTokens":
            return {"value": estimate_tokens(message_from_json(request["message"]))}
        if op == "estimateContextTokens":
            models = [message_from_json(m) for m in request["messages"]]
            return {"value": estimate_context_tokens(models).model_dump(by_alias=True)}
        if op == "serialize":
            models = [message_from_json(m) for m in request["messages"]]
            return {"value": serialize_conversation(convert_to_llm(models))}
        entries = [entry_from_json(entry) for entry in request["entries"]]
        if op == "prepareCompaction":
            settings = CompactionSettings.model_validate(request["settings"])
            prepared = prepare_compaction(entries, settings)
            if prepared is None:
                return {"value": None}
            value = prepared.model_dump(by_alias=True, exclude={"settings"}, exclude_none=True)
            value["messagesToSummarize"] = [to_json(m) for m in prepared.messages_to_summarize]
            value["turnPrefixMessages"] = [to_json(m) for m in prepared.turn_prefix_messages]
        else:
            branch = prepare_branch_entries(entries, request["budget"])
            value = branch.model_dump(by_alias=True)
            value["messages"] = [to_json(m) for m in branch.messages]
        value["fileOps"] = {key: list(paths) for key, paths in value["fileOps"].items()}
        return {"value": value}
    except MalformedMessageError as error:
        return {"error": str(error)}


def _run_pi(node_modules: Path, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = subprocess.run(
        ["node", str(SCRIPT), str(node_modules)],
        input=codec.dumps(requests),
        capture_output=True,
        check=True,
        timeout=120,
    )
    answers: list[dict[str, Any]] = codec.loads(done.stdout)
    return answers


def _file_list_requests() -> list[dict[str, Any]]:
    rng = random.Random(7)
    names = [*FILE_NAMES[:-1], "Z", "a", "\U0001f600", "\uffff", "ä", "a/b", "a-b"]
    return [
        {"op": "fileLists"}
        | {
            key: rng.sample(names, rng.randrange(len(names)))
            for key in ("read", "written", "edited")
        }
        for _ in range(30)
    ]


@pytest.fixture(scope="module")
def exchanges(pi_node_modules) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every request with Pi's answer (one node process for the whole module)."""
    requests = _requests(_branches()) + _file_list_requests()
    answers = _run_pi(pi_node_modules, requests)
    assert len(answers) == len(requests)
    return list(zip(requests, answers, strict=True))


@pytest.mark.pi
def test_random_branches_agree_with_pi(exchanges):
    errors = 0
    for request, pi in exchanges:
        if request["op"] == "fileLists":
            continue
        # Through JSON as JavaScript renders it: Pi parsed 2**60 as the nearest double.
        ours = codec.loads(codec.dumps(_ours(request)))
        if "error" in pi:
            errors += 1
            assert "error" in ours, (request["op"], pi["error"])
        else:
            assert ours == pi, request["op"]
    # The malformed branches must actually exercise Pi's failures, and not only those.
    assert 0 < errors < len(exchanges) // 4


@pytest.mark.pi
def test_file_lists_sort_like_javascript(exchanges):
    for request, pi in exchanges:
        if request["op"] != "fileLists":
            continue
        ops = FileOperations(
            read=tuple(request["read"]),
            written=tuple(request["written"]),
            edited=tuple(request["edited"]),
        )
        assert compute_file_lists(ops).model_dump(by_alias=True) == pi["value"]
