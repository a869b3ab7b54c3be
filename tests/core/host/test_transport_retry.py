"""Transport-level retries (Pi's ``retry.provider``) are shown while they happen: the
transport's worker thread hands each one to the host thread, which records and prints it
before the request is sent again. Real loopback HTTP, the real Chat Completions transport."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from support.cli_process import run_ctxmodes
from support.cli_rig import trusted
from support.wire_server import Reply, WireServer, completions_provider, overloaded_then

from ctxmodes.config import load_settings
from ctxmodes.host import records
from ctxmodes.host.runtime import AgentHost
from ctxmodes.host.transcript import TranscriptPrinter

API = "openai-completions"


class _GatedServer(WireServer):
    """Answers 503 first; the second answer waits until the retry has been shown, so a
    retry record that arrived only with the reply would leave ``shown_in_time`` unset."""

    def __init__(self) -> None:
        super().__init__(overloaded_then(API, "Recovered"))
        self.shown = threading.Event()
        self.shown_in_time = False

    def next_reply(self) -> Reply:
        if len(self.requests) == 2:
            self.shown_in_time = self.shown.wait(10)
        return super().next_reply()


def _config(directory: Path, base_url: str, *, max_retries: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ".ctxmodes.toml").write_text(
        f"[retry.provider]\nmaxRetries = {max_retries}\n"
        "[providers.loop]\n"
        f'api = "{API}"\nbase_url = "{base_url}/v1"\napi_key = "sk-loopback-key"\n'
        'models = [{ id = "m" }]\n'
    )


def test_a_transport_retry_is_recorded_and_printed_before_the_request_is_resent(
    tmp_path: Path,
) -> None:
    with _GatedServer() as server:
        _config(tmp_path, server.base_url, max_retries=2)
        loaded = load_settings(
            cwd=tmp_path,
            environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "user")},
            cli={"model": "loop/m"},
            trust=trusted,
        )
        host = AgentHost.from_settings(loaded.settings)
        seen: list[Any] = []
        printed = io.StringIO()
        printer = TranscriptPrinter(printed)

        def listen(record: Any) -> None:
            seen.append(record)
            printer(record)
            if isinstance(record, records.TransportRetryScheduled):
                server.shown.set()

        host.subscribe(listen)
        try:
            host.start(host.create_session_manager(tmp_path / "project"))
            host.session.submit("hi")
        finally:
            host.close()

    assert server.shown_in_time
    assert len(server.requests) == 2
    (retry,) = [r for r in seen if isinstance(r, records.TransportRetryScheduled)]
    assert (retry.attempt, retry.max_attempts, retry.delay_ms) == (1, 2, 1.0)
    assert retry.error_message.startswith("503")
    assert "overloaded" in retry.error_message
    assert "sk-loopback-key" not in retry.error_message
    # One assistant message: the transport's retry is not a failed turn.
    ended = [
        r for r in seen if isinstance(r, records.MessageEnded) and r.message.role == "assistant"
    ]
    assert [m.message.stop_reason for m in ended] == ["stop"]
    assert seen.index(retry) < seen.index(ended[0])
    assert not [r for r in seen if isinstance(r, records.AutoRetryStarted)]
    lines = printed.getvalue().splitlines()
    retry_line = next(i for i, line in enumerate(lines) if line.startswith("[transport retry"))
    assert lines[retry_line].startswith("[transport retry 1/2] in 0.001s after: ")
    assert retry_line < next(i for i, line in enumerate(lines) if "Recovered" in line)


@pytest.mark.slow  # runs ctxmodes in a process of its own
def test_ctxmodes_run_prints_the_transport_retry(tmp_path: Path) -> None:
    with WireServer(overloaded_then(API, "Recovered")) as server:
        _config(tmp_path, server.base_url, max_retries=1)
        result = run_ctxmodes(tmp_path, "run", "--approve", "--model", "loop/m", "hi")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "> hi"
    assert lines[1].startswith("[transport retry 1/1] in 0.001s after: ")
    assert "overloaded" in lines[1]
    assert lines[-1].endswith("Recovered")
    assert len(server.requests) == 2


def test_a_summary_call_reports_its_transport_retries(tmp_path: Path) -> None:
    from ctxmodes.abort import AbortController
    from ctxmodes.host.summarizer import ProviderSummarizer
    from ctxmodes.session.models import UserMessage

    with WireServer(overloaded_then(API, "the summary")) as server:
        provider = completions_provider(server, max_retries=1)
        seen: list[Any] = []
        summarize = ProviderSummarizer(
            provider, AbortController().signal, "compaction", seen.append
        )
        reply = summarize("system", [UserMessage(content="summarize", timestamp=1)], 100)
        provider.close()
    assert reply.text == "the summary"
    (retry,) = [r for r in seen if isinstance(r, records.TransportRetryScheduled)]
    assert (retry.attempt, retry.max_attempts) == (1, 1)
    # A transport retry is not a summary retry: the summary budget is untouched.
    assert not [r for r in seen if isinstance(r, records.SummarizationRetryScheduled)]


def test_a_model_switched_to_sends_its_requests_as_configured(tmp_path: Path) -> None:
    """``/model`` (the SDK's ``switch_model``) keeps ``retry.provider``: the new model's
    request is retried at the transport, with the turn retry off."""
    from ctxmodes.sdk import open_agent

    with WireServer(overloaded_then(API, "Recovered")) as server:
        (tmp_path / ".ctxmodes.toml").write_text(
            "[retry]\nenabled = false\n[retry.provider]\nmaxRetries = 1\n[providers.loop]\n"
            f'api = "{API}"\nbase_url = "{server.base_url}/v1"\napi_key = "sk-loopback-key"\n'
            'models = [{ id = "m" }, { id = "other" }]\n'
        )
        loaded = load_settings(
            cwd=tmp_path,
            environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "user")},
            cli={"model": "loop/m"},
            trust=trusted,
        )
        with open_agent(cwd=tmp_path, settings=loaded.settings, session_dir=tmp_path) as agent:
            agent.switch_model("loop/other")
            agent.prompt("hi")
            reply = agent.session_manager.build_session_context().messages[-1]
    assert [json.loads(request["body"])["model"] for request in server.requests] == [
        "other",
        "other",
    ]
    assert reply.content[0].text == "Recovered"  # type: ignore[union-attr]
