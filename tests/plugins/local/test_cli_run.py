"""``ctxmodes run --mode local --trace``, end to end: the model checkpoints into notes, calls
``new_context``, and in the next window sees only the new marker and its new work, finds
window 0 through ``history`` and reads its checkpoint back. The session written by that run
is then opened by the real Pi, which knows no projection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.session.manager import SessionManager
from ctxmodes.session.report import context_report
from ctxmodes.session.tree import flat_tree

DETAIL = "deploy-key-4410"
PROMPT = "find the deploy key"
CHECKPOINT = f"Found {DETAIL} in the shell output.\nNext: rotate it."
SCRIPT: dict[str, Any] = {
    "responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"echo {DETAIL}"}}]},
        {
            "tool_calls": [
                {
                    "name": "notes",
                    "arguments": {
                        "action": "write_file",
                        "path": "checkpoint.md",
                        "text": CHECKPOINT,
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "new_context"}]},
        {
            "tool_calls": [
                {"name": "notes", "arguments": {"action": "read_file", "path": "checkpoint.md"}}
            ]
        },
        {
            "tool_calls": [
                {"name": "history", "arguments": {"action": "search_contents", "query": DETAIL}}
            ]
        },
        {"text": "Rotating it now."},
    ]
}


def role_of(message: dict[str, Any]) -> str:
    role: str = message["role"]
    return role


def texts_of(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One ``ctxmodes run`` of the script; its session file, trace and stored entries."""
    directory = tmp_path_factory.mktemp("local-run")
    script = directory / "script.json"
    script.write_text(json.dumps(SCRIPT))
    session = directory / "session.jsonl"
    trace = directory / "trace.jsonl"
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("CTXMODES_")
    }
    environment["CTXMODES_CONFIG_DIR"] = str(directory / "config")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "ctxmodes",
            "run",
            "--mode",
            "local",
            "--model",
            f"scripted:{script}",
            "--session",
            str(session),
            "--cwd",
            str(directory),
            "--trace",
            str(trace),
            PROMPT,
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    requests = [json.loads(line) for line in trace.read_text().splitlines()]
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return {"session": session, "requests": requests, "entries": entries}


def window_markers(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e
        for e in entries
        if e["type"] == "custom_message"
        and e["customType"] == "codex-context-window"
        and e["details"]["contextManagement"]["kind"] == "window"
    ]


def last_tool_result(entries: list[dict[str, Any]], tool: str) -> str:
    results = [
        e["message"]
        for e in entries
        if e["type"] == "message"
        and e["message"]["role"] == "toolResult"
        and e["message"]["toolName"] == tool
    ]
    return texts_of(results[-1])


def test_the_next_window_shows_only_its_marker_and_new_work(run) -> None:
    requests = run["requests"]
    assert [r["purpose"] for r in requests] == ["turn"] * 6
    old, new = window_markers(run["entries"])
    # Window 0: its marker, the prompt and everything done since.
    for request in requests[:3]:
        assert role_of(request["messages"][0]) == "developer"
        assert texts_of(request["messages"][0]) == old["content"]
        assert PROMPT in json.dumps(request["messages"])
    # Window 1 opens with the new marker alone.
    (opening,) = requests[3]["messages"]
    assert role_of(opening) == "developer"
    assert texts_of(opening) == new["content"]
    for request in requests[3:]:
        messages = request["messages"]
        assert [role_of(m) for m in messages[:1]] == ["developer"]
        assert [texts_of(m) for m in messages if role_of(m) == "developer"] == [new["content"]]
        assert all(role_of(m) != "user" for m in messages)
        sent = json.dumps(messages)
        assert PROMPT not in sent
        assert '"name": "bash"' not in sent
        assert '"toolName": "bash"' not in sent


def test_history_and_notes_recover_window_zero(run) -> None:
    entries = run["entries"]
    old, _ = window_markers(entries)
    note = json.loads(last_tool_result(entries, "notes"))
    assert note["file"]["path"] == "/root/notes/checkpoint.md"
    assert note["file"]["content"] == CHECKPOINT
    found = json.loads(last_tool_result(entries, "history"))["items"]
    assert found, "the search found nothing"
    old_id = old["details"]["contextManagement"]["currentWindowId"]
    bash = [item for item in found if item.get("tool_name") == "bash"]
    assert {item["window_id"] for item in bash} == {old_id}
    assert any(item["role"] == "tool" and DETAIL in item["truncated_content"] for item in bash)


def test_the_new_marker_names_the_checkpoint(run) -> None:
    old, new = window_markers(run["entries"])
    lines = CHECKPOINT.count("\n") + 1
    size = len(CHECKPOINT.encode())
    assert f"- /root/notes/checkpoint.md ({lines} lines, {size} UTF-8 bytes)" in new["content"]
    old_id = old["details"]["contextManagement"]["currentWindowId"]
    (user,) = [
        e for e in run["entries"] if e["type"] == "message" and e["message"]["role"] == "user"
    ]
    recovery = {"window_id": old_id, "user_item_ids": [user["id"]]}
    assert (
        "Previous window history IDs: " + json.dumps(recovery, separators=(",", ":"))
        in (new["content"])
    )


@pytest.mark.pi
def test_pi_sees_the_whole_branch_where_the_model_saw_one_window(run) -> None:
    from support.pi_oracle import require_pi

    pi = require_pi()
    session: Path = run["session"]
    (answer,) = pi.open_many([{"file": str(session), "at": []}])
    assert "openError" not in answer
    with SessionManager.open(session, read_only=True) as manager:
        ours = {"tree": flat_tree(manager.get_tree()), **context_report(manager, llm=True)}
    for key in ("tree", "leafId", "branchIds", "contextEntryIds", "context", "llm"):
        assert json.dumps(answer[key], sort_keys=True) == json.dumps(ours[key], sort_keys=True), key
    # Pi has no projection: both windows and both markers, the markers as user messages.
    old, new = window_markers(run["entries"])
    pi_llm = answer["llm"]
    marker_roles = [m["role"] for m in pi_llm if texts_of(m) in (old["content"], new["content"])]
    assert marker_roles == ["user", "user"]
    pi_text = json.dumps(pi_llm)
    assert PROMPT in pi_text
    assert DETAIL in pi_text
    # ... where the model's last request held window 1 only.
    last = run["requests"][-1]["messages"]
    assert PROMPT not in json.dumps(last)
    assert len(last) < len(pi_llm)
