"""A Pi user's settings reach the run: ``ctxmodes run`` starts the session at Pi's
``defaultThinkingLevel`` (or the model's own level of ``modelThinkingLevels``), asks the
model to think that hard, and retries as Pi's ``retry`` says; ctxmodes' own configuration
overrides them, and ``--thinking`` (or ``--model provider/id:level``) the run's level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings, pi_agent_dir
from support.wire_server import Reply, WireServer, json_error, text_stream

API = "openai-responses"


def _run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    config: str,
    *flags: str,
    model: str = "loop/m",
) -> tuple[str, WireServer]:
    replies = [
        Reply(json_error("The server is overloaded"), status=503),
        Reply(text_stream(API, "Recovered answer")),
    ]
    with WireServer(replies) as server:
        (tmp_path / "config").mkdir(exist_ok=True)
        (tmp_path / "config" / "config.toml").write_text(
            f"{config}\n"
            "[providers.loop]\n"
            f'api = "{API}"\n'
            f'base_url = "{server.base_url}/v1"\n'
            'api_key = "sk-loopback"\n'
            'models = [{ id = "m", reasoning = true }]\n'
        )
        session = tmp_path / f"s{len(list(tmp_path.glob('s*.jsonl')))}.jsonl"
        code, out, err = ctxmodes(
            capsys, "run", "--model", model, *flags, "--session", str(session), "hello"
        )
    assert code == 0, err
    levels = [
        entry["thinkingLevel"]
        for entry in map(json.loads, session.read_text().splitlines())
        if entry["type"] == "thinking_level_change"
    ]
    assert len(levels) == 1
    efforts = [json.loads(request["body"])["reasoning"]["effort"] for request in server.requests]
    assert efforts == [levels[0], levels[0]]  # the first request and its retry
    return out, server


def _effort(server: WireServer) -> str:
    return str(json.loads(server.requests[0]["body"])["reasoning"]["effort"])


def test_a_run_takes_pis_thinking_level_and_retry_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    agent = pi_agent_dir(tmp_path, monkeypatch)
    (agent / "settings.json").write_text(
        json.dumps({"defaultThinkingLevel": "high", "retry": {"maxRetries": 1, "baseDelayMs": 1}})
    )
    out, server = _run(tmp_path, capsys, "")
    assert "[retry 1/1] in 0.001s" in out
    assert _effort(server) == "high"

    # ctxmodes' own keys win over Pi's.
    out, server = _run(tmp_path, capsys, 'thinking_level = "low"\n[retry]\nmax_retries = 2\n')
    assert "[retry 1/2] in 0.001s" in out
    assert _effort(server) == "low"


@pytest.mark.slow  # four whole runs against a loopback model
def test_a_run_starts_at_the_models_own_level_and_the_command_lines_over_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    agent = pi_agent_dir(tmp_path, monkeypatch)
    (agent / "settings.json").write_text(
        json.dumps(
            {
                "defaultThinkingLevel": "high",
                "modelThinkingLevels": {"loop/m": "low", "loop/other": "minimal"},
                "retry": {"maxRetries": 1, "baseDelayMs": 1},
            }
        )
    )
    assert _effort(_run(tmp_path, capsys, "")[1]) == "low"
    assert _effort(_run(tmp_path, capsys, "", "--thinking", "minimal")[1]) == "minimal"
    # Pi's shorthand; --thinking wins over it.
    assert _effort(_run(tmp_path, capsys, "", model="loop/m:medium")[1]) == "medium"
    flags = ("--thinking", "high")
    assert _effort(_run(tmp_path, capsys, "", *flags, model="loop/m:medium")[1]) == "high"


def test_an_unknown_thinking_level_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    with pytest.raises(SystemExit) as exit_:
        ctxmodes(capsys, "run", "--model", "scripted:x.json", "--thinking", "hot", "hi")
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --thinking: invalid choice: 'hot'" in err
    assert "Traceback" not in err
