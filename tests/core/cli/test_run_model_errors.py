"""What ``ctxmodes run`` says when the model's endpoint answers with an error: the recorded
answers of the shared provider cases, served on loopback to a built-in provider whose
``baseUrl`` a user moved there in Pi's ``models.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import ctxmodes, isolate_settings, pi_agent_dir
from support.provider_cases import cases_dir
from support.wire_server import Reply, WireServer

KEY = "sk-oracle-test-key"


def recorded_reply(case: str) -> Reply:
    directory = cases_dir()
    if directory is None or not (directory / f"{case}.json").exists():
        pytest.skip("the shared provider cases are not here")
    (answer,) = json.loads((directory / f"{case}.json").read_text())["responses"]
    body: Any = answer.get("body", json.dumps(answer.get("json")))
    return Reply([body.encode()], status=answer["status"], headers=answer["headers"])


@pytest.mark.slow  # waits out the retries' delays
def test_a_rate_limit_that_outlasts_the_retries_names_the_model_and_keeps_the_key_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    agent = pi_agent_dir(tmp_path, monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text("[retry]\nmaxRetries = 1\nbaseDelayMs = 1\n")
    reply = recorded_reply("responses_http_429_no_retry")
    trace = tmp_path / "trace.jsonl"
    with WireServer([reply] * 4) as server:
        (agent / "models.json").write_text(
            json.dumps({"providers": {"openai": {"baseUrl": f"{server.base_url}/v1"}}})
        )
        code, out, err = ctxmodes(
            capsys, "run", "--model", "openai/gpt-5.1", "--trace", str(trace), "hello"
        )
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(
        "ctxmodes: error: model error from openai/gpt-5.1: OpenAI API error (429): "
    )
    assert "Rate limit reached for gpt-5.1" in line
    assert "Traceback" not in out + err
    for text in (out, err, trace.read_text()):
        assert KEY not in text
