"""Replaying Pi's ``agent_*`` traces on our host.

Each trace records operations on a real Pi ``AgentSession`` (``prompt``, ``navigateTree``,
``compact``), the entries each appended, and every request its (faux) model received. We
start from the same session file, answer with a scripted model that says what Pi's model
said (assistant texts and usage, summary texts), run the same operations through
:class:`AgentSession`, and compare: the appended entries (types, roles, parent links by
position, ``fromId``/``firstKeptEntryId``/``tokensBefore``/summary/details/labels), leaves,
editor text, and the requests the model received (count, purpose, message roles and texts
for turns; message count, roles and output caps for summaries — not the prompt wording).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import require_oracle_cases

from ctxmodes import NavigationRequest
from ctxmodes.compaction import (
    BRANCH_SUMMARY_PREAMBLE,
    CompactionSettings,
    estimate_context_tokens,
    format_file_operations,
    prepare_compaction,
)
from ctxmodes.compaction.summarize import NO_PRIOR_HISTORY, SPLIT_TURN_SEPARATOR
from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.host.runtime import AgentHost
from ctxmodes.plugins import make_plugin_manager
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.session.manager import SessionManager
from ctxmodes.session.models import to_json

CASES = [
    "agent_navigate_user_summarize",
    "agent_navigate_assistant_summarize_label",
    "agent_navigate_no_summary",
    "agent_navigate_root_user",
    "agent_compact",
]
# Pi's compaction for agent_compact kept ~60 recent tokens (see the oracle manifest).
KEEP_RECENT_TOKENS = 60
MODEL_MAX_TOKENS = 16_384
PI_SUMMARIZER_PROMPT_START = "You are a context summarization assistant"
# The data parts of a summarization prompt (the instructions around them are our own words).
SUMMARY_DATA = (
    re.compile(r"<conversation>\n.*?\n</conversation>", re.DOTALL),
    re.compile(r"<previous-summary>\n.*?\n</previous-summary>", re.DOTALL),
    re.compile(r"^Additional focus: .*$", re.MULTILINE),
)


def _strip_file_ops(summary: str, details: dict[str, Any] | None) -> str:
    details = details or {}
    suffix = format_file_operations(details.get("readFiles", []), details.get("modifiedFiles", []))
    assert summary.endswith(suffix)
    return summary[: len(summary) - len(suffix)] if suffix else summary


class Replay:
    """The script and expectations derived from one case."""

    def __init__(self, cases: Path, name: str) -> None:
        self.trace = json.loads((cases / f"{name}.trace.json").read_text())
        self.lines = (cases / f"{name}.jsonl").read_bytes().splitlines(keepends=True)
        self.entries = [json.loads(line) for line in self.lines[1:]]
        self.by_id = {entry["id"]: entry for entry in self.entries}
        self.compaction = json.loads((cases / f"{name}.compaction.json").read_text())
        self.responses: list[dict[str, Any]] = []
        self.summaries: list[str] = []
        #: Output cap of each summarization call, in order.
        self.summary_caps: list[int] = []
        reserve = CompactionSettings().reserve_tokens
        for step in self.trace["steps"]:
            for appended in step["appended"]:
                entry = self.by_id[appended["id"]]
                if entry["type"] == "message" and entry["message"]["role"] == "assistant":
                    self.responses.append(self._response(entry["message"]))
                elif entry["type"] == "branch_summary" and not entry.get("fromHook"):
                    text = _strip_file_ops(entry["summary"], entry.get("details"))
                    self.summaries.append(text.removeprefix(BRANCH_SUMMARY_PREAMBLE))
                    self.summary_caps.append(min(4096, MODEL_MAX_TOKENS))
                elif entry["type"] == "compaction":
                    text = _strip_file_ops(entry["summary"], entry.get("details"))
                    history, split, prefix = text.partition(SPLIT_TURN_SEPARATOR)
                    if not split or history != NO_PRIOR_HISTORY:
                        self.summaries.append(history)
                        self.summary_caps.append(int(0.8 * reserve))
                    if split:
                        self.summaries.append(prefix)
                        self.summary_caps.append(int(0.5 * reserve))

    @staticmethod
    def _response(message: dict[str, Any]) -> dict[str, Any]:
        response: dict[str, Any] = {}
        for block in message["content"]:
            if block["type"] == "text":
                response["text"] = block["text"]
            elif block["type"] == "thinking":
                response["thinking"] = block["thinking"]
        usage = dict(message["usage"])
        response["usage"] = usage
        return response

    def initial_file(self, path: Path) -> None:
        appended = {a["id"] for step in self.trace["steps"] for a in step["appended"]}
        first = next(i for i, entry in enumerate(self.entries) if entry["id"] in appended)
        path.write_bytes(b"".join(self.lines[: 1 + first]))


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [block.get("text", "") for block in content or [] if block.get("type") == "text"]


@pytest.mark.parametrize("name", CASES)
def test_host_replays_pi_agent_trace(name, tmp_path):
    replay = Replay(require_oracle_cases(), name)
    file = tmp_path / f"{name}.jsonl"
    replay.initial_file(file)
    script = Script.model_validate(
        {
            "responses": replay.responses,
            "summaries": replay.summaries,
            "max_tokens": MODEL_MAX_TOKENS,
        }
    )
    pm = make_plugin_manager(load_entrypoints=False, default_plugins=())
    host = AgentHost(
        pm=pm,
        provider=ScriptedProvider(script),
        mode=None,
        options=HostOptions(compaction=CompactionSettings(keep_recent_tokens=KEEP_RECENT_TOKENS)),
    )
    requests: list[records.ProviderRequested] = []
    host.subscribe(
        lambda r: requests.append(r) if isinstance(r, records.ProviderRequested) else None
    )
    start_count = SessionManager.open(file).entry_count()
    prefix = replay.entries[:start_count]
    if not any(entry["type"] == "message" for entry in prefix):
        # Pi's trace starts in the session it just made, whose settings it recorded as a new
        # session's; a session holding no message yet is new when it opens too, so the host
        # records them itself, from the header alone.
        file.write_bytes(replay.lines[0])
    manager = SessionManager.open(file)
    session = host.start(manager)
    started = list(manager.get_entries())
    assert [entry.type for entry in started] == [entry["type"] for entry in prefix]
    ids = {theirs["id"]: mine.id for theirs, mine in zip(prefix, started, strict=True)}

    def ours(pi_id: str | None) -> str | None:
        return None if pi_id is None else ids[pi_id]

    try:
        for step in replay.trace["steps"]:
            assert manager.get_leaf_id() == ours(step["leafBefore"])
            before = manager.entry_count()
            op, args = step["op"], step["args"]
            if op == "prompt":
                session.prompt(args[0])
            elif op == "navigateTree":
                options = args[1] if len(args) > 1 else {}
                result = session.navigate_tree(
                    NavigationRequest(
                        ours(args[0]) or "",
                        summarize=options.get("summarize", False),
                        custom_instructions=options.get("customInstructions"),
                        label=options.get("label"),
                    ),
                )
                assert result.cancelled == step["result"]["cancelled"]
                assert result.editor_text == step["result"].get("editorText")
            elif op == "compact":
                entry = session.compact(args[0] if args else None)
                assert entry.summary == step["result"]["summary"]
                assert entry.tokens_before == step["result"]["tokensBefore"]
            else:
                pytest.fail(f"unknown trace operation {op}")
            appended = list(manager.get_entries())[before:]
            assert len(appended) == len(step["appended"]), op
            for mine, theirs in zip(appended, step["appended"], strict=True):
                _compare_entry(to_json(mine), replay.by_id[theirs["id"]], ours)
                ids[theirs["id"]] = mine.id
            assert manager.get_leaf_id() == ours(step["leafAfter"])
        _compare_requests(requests, replay)
        _compare_final_state(manager, replay, ours)
    finally:
        host.close()


def _compare_entry(mine: dict[str, Any], pi: dict[str, Any], ours: Any) -> None:
    assert mine["type"] == pi["type"]
    assert mine["parentId"] == ours(pi["parentId"])
    kind = pi["type"]
    if kind == "message":
        assert mine["message"]["role"] == pi["message"]["role"]
        assert _texts(mine["message"]) == _texts(pi["message"])
    elif kind == "branch_summary":
        assert mine["fromId"] == ours(pi["fromId"])
        for key in ("summary", "details", "fromHook"):
            assert mine.get(key) == pi.get(key), key
    elif kind == "compaction":
        assert mine["firstKeptEntryId"] == ours(pi["firstKeptEntryId"])
        for key in ("summary", "tokensBefore", "details", "fromHook"):
            assert mine.get(key) == pi.get(key), key
    elif kind == "label":
        assert mine["targetId"] == ours(pi["targetId"])
        assert mine.get("label") == pi.get("label")


def _compare_requests(requests: list[records.ProviderRequested], replay: Replay) -> None:
    pi_requests = replay.trace["llmRequests"]
    assert len(requests) == len(pi_requests)
    caps = iter(replay.summary_caps)
    for record, pi in zip(requests, pi_requests, strict=True):
        request = record.request
        summarizer = pi["systemPrompt"].startswith(PI_SUMMARIZER_PROMPT_START)
        assert (request.purpose != "turn") == summarizer
        assert [m.role for m in request.messages] == [m["role"] for m in pi["messages"]]
        assert request.tools == []
        assert pi["tools"] == []
        if summarizer:
            assert request.max_tokens == next(caps)
            mine_text = "".join(_texts(to_json(request.messages[0])))
            pi_text = "".join(_texts(pi["messages"][0]))
            for pattern in SUMMARY_DATA:
                assert pattern.findall(mine_text) == pattern.findall(pi_text), pattern.pattern
        else:
            assert [_texts(to_json(m)) for m in request.messages] == [
                _texts(m) for m in pi["messages"]
            ]


def _compare_final_state(manager: SessionManager, replay: Replay, ours: Any) -> None:
    expected = replay.compaction
    branch = manager.get_branch()
    assert len(branch) == expected["pathLength"]
    estimate = estimate_context_tokens(manager.build_session_context().messages)
    assert estimate.model_dump(by_alias=True) == expected["estimateContextTokens"]
    for keep, pi in expected["prepareCompaction"].items():
        preparation = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=int(keep)))
        if pi is None or "error" in pi:
            assert preparation is None
            continue
        assert preparation is not None
        assert preparation.first_kept_entry_id == ours(pi["firstKeptEntryId"])
        assert preparation.tokens_before == pi["tokensBefore"]
        assert preparation.is_split_turn == pi["isSplitTurn"]
