"""The Remote mode end to end, all real processes on loopback: ``ctxmodes serve`` with a
scripted upstream, and ``ctxmodes run --mode remote`` on a Codex-transport model configured
to that service (its CA trusted through ``SSL_CERT_FILE``)."""

import base64
import json
import os
import subprocess

import pytest
from support.serve_process import CTXMODES, ServeProcess, create_token

from ctxmodes_remote.service.crypto import load_or_create_keyring

pytestmark = pytest.mark.slow

DETAIL = "needle-5521"
NOTE = f"goal: e2e; detail {DETAIL}"
SCRIPT = {
    "model": "probe-model",
    "context_window": 272_000,
    "responses": [
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "namespace": "notes",
                    "arguments": {"path": "checkpoint.md", "text": NOTE},
                }
            ]
        },
        {"tool_calls": [{"name": "new_context", "arguments": {}}]},
        {
            "tool_calls": [
                {"name": "read_file", "namespace": "notes", "arguments": {"path": "checkpoint.md"}}
            ]
        },
        {
            "tool_calls": [
                {"name": "search_contents", "namespace": "history", "arguments": {"query": DETAIL}}
            ]
        },
        {"text": "e2e done"},
    ],
}


def test_remote_mode_runs_a_full_cycle_against_the_service(tmp_path, tls):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    data = tmp_path / "data"
    token = create_token(data, "alice")
    account = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["sub"]
    service = ServeProcess(f"scripted:{script}", data, tls, tmp_path / "serve.log")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".ctxmodes.toml").write_text(
        "[providers.svc]\n"
        'api = "openai-codex-responses"\n'
        f'base_url = "{service.base}"\n'
        f'api_key = "{token}"\n'
        'models = [{ id = "probe-model", context_window = 272000, max_tokens = 8192 }]\n'
    )
    pi_dir = tmp_path / "pi"
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(pi_dir),
        "CODEX_HOME": str(tmp_path / "codex"),
        "CTXMODES_CONFIG_DIR": str(tmp_path / "config"),
        "SSL_CERT_FILE": str(tls.ca),
    }
    try:
        run = subprocess.run(
            [str(CTXMODES), "run", "--mode", "remote", "--model", "svc/probe-model", "go"],
            cwd=work,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        assert service.stop() == 0
    assert run.returncode == 0, run.stderr
    assert "e2e done" in run.stdout
    assert "Unable to perform operation" not in run.stdout

    [session] = list(pi_dir.rglob("*.jsonl"))
    text = session.read_text()
    # Only ciphertext of the note and of the query reached the session file.
    assert DETAIL not in text
    # Window 1's marker carries the thread hint naming the checkpoint.
    assert "/root/notes/checkpoint.md (1 line" in text
    keyring = load_or_create_keyring(data)
    outputs = [
        json.loads(keyring.decrypt(account, value))
        for value in _encrypted_outputs(json.loads(line) for line in text.splitlines())
    ]
    written, read, found = outputs
    assert written["file"]["path"] == "/root/notes/checkpoint.md"
    assert read["file"]["content"] == NOTE
    # The window-0 note write is found from window 1.
    windows = {item["window_id"] for item in found["items"]}
    assert len(windows) == 2
    assert found["items"][0]["tool_name"] == "write_file"


def _encrypted_outputs(entries):
    for entry in entries:
        message = entry.get("message") or {}
        details = message.get("details") if isinstance(message, dict) else None
        if isinstance(details, dict):
            value = (details.get("codexHistoryNotes") or {}).get("encrypted_output")
            if isinstance(value, str):
                yield value
