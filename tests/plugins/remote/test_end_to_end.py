"""Remote end to end with every part a real process on loopback: ``ctxmodes serve`` in front
of the scripted model (or of a Chat Completions model served over HTTP), and ``ctxmodes run
--mode remote`` on a Codex-transport provider whose base URL is that service (its CA trusted
through ``SSL_CERT_FILE``).

Window 0 writes a checkpoint note and calls ``new_context``; window 1's marker carries the
service's thread hint; window 1 reads the note back and finds a window-0 detail with
``history.search_contents``. The session file holds ciphertext only, and opens in the real Pi.
And a thinking model's signed thinking, shown in the session, goes round sealed and back to the
model as it requires.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.pi_oracle import require_pi
from support.provider_cases import ANTHROPIC_THINKING_TURNS, recorded_case, recorded_reply
from support.serve_process import (
    ServeProcess,
    create_token,
    ctxmodes_run_against,
    scripted_call,
    upstream_endpoint,
)
from support.service_rig import make_tls
from support.wire_server import ConversationServer, WireServer

from ctxmodes_remote.service.codex_home import account_of
from ctxmodes_remote.service.crypto import load_or_create_keyring

pytestmark = [pytest.mark.slow, pytest.mark.pi]

MODEL = "probe-model"
DETAIL = "needle-5521"
NOTE = f"goal: ship the parser; detail {DETAIL} lives in src/lexer.py"
PROMPT = "continue the parser work"


SCRIPT = {
    "model": MODEL,
    "context_window": 272_000,
    "responses": [
        scripted_call("write_file", {"path": "checkpoint.md", "text": NOTE}, "notes"),
        scripted_call("new_context", {}),
        scripted_call("read_file", {"path": "checkpoint.md"}, "notes"),
        scripted_call("search_contents", {"query": DETAIL}, "history"),
        {"text": "resumed from the checkpoint"},
    ],
}


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return make_tls(tmp_path_factory.mktemp("tls"))


def session_lines(agent_dir: Path) -> tuple[Path, list[dict[str, Any]]]:
    [session_file] = list((agent_dir / "sessions").rglob("*.jsonl"))
    lines = [json.loads(line) for line in session_file.read_text().splitlines() if line]
    return session_file, lines


def test_remote_runs_end_to_end_against_ctxmodes_serve(tmp_path: Path, tls: Any) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    data = tmp_path / "data"
    token = create_token(data, "alice")
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    try:
        run, agent_dir = ctxmodes_run_against(
            service, token, MODEL, tmp_path / "run", "--mode", "remote", PROMPT
        )
    finally:
        assert service.stop() == 0
    log = service.log.read_text()
    assert run.returncode == 0, run.stderr + log[-4000:]
    assert "resumed from the checkpoint" in run.stdout

    session_file, lines = session_lines(agent_dir)
    raw = session_file.read_text()
    assert "Unable to perform operation" not in raw
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [m for m in results if m["isError"]] == []
    assert [m["toolName"] for m in results] == ["notes", "new_context", "notes", "history"]

    # Two windows: the second marker carries the service's thread hint naming the note.
    markers = [line for line in lines if line.get("customType") == "codex-context-window"]
    assert [m["details"]["contextManagement"]["windowNumber"] for m in markers] == [0, 1]
    window_zero = markers[0]["details"]["contextManagement"]["currentWindowId"]
    assert "checkpoint.md" not in markers[0]["content"]
    assert "- /root/notes/checkpoint.md (1 line" in markers[1]["content"]
    assert f"Previous context window id: {window_zero}" in markers[1]["content"]

    # Nothing secret is kept: the note, the query (the detail itself) and the answers are
    # ciphertext only.
    assert DETAIL not in raw

    # The ciphertext is the service's: opened with the account's key, window 1 read the
    # note back and its search found the window-0 note write that holds the detail.
    keyring = load_or_create_keyring(data)
    account_id = account_of(token)

    def opened(message: dict[str, Any]) -> Any:
        sealed = message["details"]["codexHistoryNotes"]["encrypted_output"]
        return json.loads(keyring.decrypt(account_id, sealed))

    write, _, read, search = results
    assert opened(write)["file"]["path"] == "/root/notes/checkpoint.md"
    assert opened(read)["file"]["content"] == NOTE
    found = opened(search)["items"][0]
    assert (found["window_id"], found["tool_name"]) == (window_zero, "write_file")
    assert DETAIL in found["truncated_content"]

    pi = require_pi()
    (answer,) = pi.open_many([{"file": str(session_file), "at": []}])
    assert "openError" not in answer
    assert answer["entryCount"] == len([line for line in lines if line.get("type") != "session"])


def _endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api: str, base_url: str, thinks: bool = False
) -> str:
    """The model over HTTP the service fronts, configured as a team configures it."""
    config = tmp_path / "config"
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(config))
    return upstream_endpoint(config, api, base_url, MODEL, reasoning=thinks)


def _remote_run(
    tmp_path: Path, tls: Any, upstream: str, *arguments: str, reasoning: bool = False
) -> tuple[Any, Path, Path, str]:
    """``ctxmodes run --mode remote ARGUMENTS`` against a service in front of ``upstream``,
    which stops cleanly after it; the run (which succeeded), its Pi agent directory, the
    service's data directory and alice's token."""
    data = tmp_path / "data"
    token = create_token(data, "alice")
    service = ServeProcess(upstream, data, tls, tmp_path / "serve.log")
    try:
        run, agent_dir = ctxmodes_run_against(
            service,
            token,
            MODEL,
            tmp_path / "run",
            "--mode",
            "remote",
            *arguments,
            reasoning=reasoning,
        )
    finally:
        assert service.stop() == 0
    assert run.returncode == 0, run.stderr + service.log.read_text()[-4000:]
    return run, agent_dir, data, token


def test_remote_runs_end_to_end_against_ctxmodes_serve_in_front_of_a_model_over_http(
    tmp_path: Path, tls: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The service in front of a Chat Completions server (Ollama, a gateway): no namespaces on
    # that wire, so the model names the tools notes__write_file, history__search_contents….
    write = {"name": "notes__write_file", "arguments": {"path": "c.md", "text": NOTE}}
    turns = [
        {"tool_calls": [write]},
        {"tool_calls": [{"name": "new_context", "arguments": {}}]},
        {"tool_calls": [{"name": "notes__read_file", "arguments": {"path": "c.md"}}]},
        {"tool_calls": [{"name": "history__search_contents", "arguments": {"query": DETAIL}}]},
        {"text": "resumed from the checkpoint"},
    ]
    with ConversationServer("openai-completions", turns, []) as model:
        upstream = _endpoint(tmp_path, monkeypatch, "openai-completions", f"{model.base_url}/v1")
        run, agent_dir, data, token = _remote_run(tmp_path, tls, upstream, PROMPT)
    assert "resumed from the checkpoint" in run.stdout

    session_file, lines = session_lines(agent_dir)
    raw = session_file.read_text()
    assert DETAIL not in raw
    messages = [line["message"] for line in lines if line.get("type") == "message"]
    results = [m for m in messages if m["role"] == "toolResult"]
    assert [m for m in results if m["isError"]] == []
    assert [m["toolName"] for m in results] == ["notes", "new_context", "notes", "history"]
    keyring = load_or_create_keyring(data)
    account_id = account_of(token)
    sealed = [m["details"]["codexHistoryNotes"]["encrypted_output"] for m in results[2:]]
    read, search = (json.loads(keyring.decrypt(account_id, s)) for s in sealed)
    assert read["file"]["content"] == NOTE
    assert DETAIL in search["items"][0]["truncated_content"]


def test_a_thinking_models_signed_thinking_goes_round_remote_sealed(
    tmp_path: Path, tls: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two turns recorded from Anthropic's API: the model thinks (signed) and calls a tool the
    # agent does not have, then answers. Anthropic refuses the second request, thinking on,
    # unless the first turn's signed thinking comes back first and unaltered.
    (first, _), (then, _) = (recorded_case(name) for name in ANTHROPIC_THINKING_TURNS)
    with WireServer([recorded_reply(first), recorded_reply(then)]) as model:
        upstream = _endpoint(tmp_path, monkeypatch, "anthropic-messages", model.base_url, True)
        arguments = ("--thinking", "low", PROMPT)
        run, agent_dir, *_ = _remote_run(tmp_path, tls, upstream, *arguments, reasoning=True)

    asked, answered = (json.loads(request["body"]) for request in model.requests)
    assert asked["thinking"]["type"] == "enabled"
    [recorded] = [
        block
        for message in then["context"]["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "thinking"
    ]
    [turn] = [m for m in answered["messages"] if m["role"] == "assistant"]
    assert turn["content"][0] == {
        "type": "thinking",
        "thinking": recorded["thinking"],
        "signature": recorded["thinkingSignature"],
    }
    # The session shows the thinking and keeps the signed block only as the service sealed it.
    session_file, lines = session_lines(agent_dir)
    assert recorded["thinkingSignature"][:40] not in session_file.read_text()
    assistant = [
        line["message"]
        for line in lines
        if line.get("type") == "message" and line["message"]["role"] == "assistant"
    ]
    thoughts = [b for b in assistant[0]["content"] if b["type"] == "thinking"]
    assert [b["thinking"] for b in thoughts] == [recorded["thinking"]]
    assert "(thinking)" in run.stdout
    pi = require_pi()
    (opened,) = pi.open_many([{"file": str(session_file), "at": []}])
    assert "openError" not in opened
