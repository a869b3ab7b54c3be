"""``ctxmodes run`` shows a retry as it happens and succeeds when the retry does."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli_rig import ctxmodes, isolate_settings
from support.wire_server import Reply, WireServer, json_error, text_stream


@pytest.mark.parametrize("api", ["openai-responses", "openai-completions"])
def test_run_prints_the_retry_and_ends_with_the_answer(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_settings(tmp_path, monkeypatch)
    replies = [
        Reply(json_error("The server is overloaded"), status=503),
        Reply(text_stream(api, "Recovered answer")),
    ]
    with WireServer(replies) as server:
        (tmp_path / ".ctxmodes.toml").write_text(
            "[retry]\nbaseDelayMs = 1\n\n"
            "[providers.loop]\n"
            f'api = "{api}"\n'
            f'base_url = "{server.base_url}/v1"\n'
            'api_key = "sk-loopback"\n'
            'models = [{ id = "m" }]\n'
        )
        code, out, err = ctxmodes(
            capsys,
            "run",
            "--approve",
            "--model",
            "loop/m",
            "--session",
            str(tmp_path / "s.jsonl"),
            "hello",
        )
    assert code == 0, err
    lines = out.splitlines()
    retry = next(i for i, line in enumerate(lines) if line.startswith("[retry 1/3] in 0.001s"))
    assert "overloaded" in lines[retry]
    assert lines.index("Recovered answer") > retry
    assert "[retry] succeeded on attempt 1" in lines
