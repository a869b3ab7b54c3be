"""The host retries turns that failed on transient errors, as Pi's AgentSession does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.cli_rig import trusted
from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response

from ctxmodes.abort import AbortSignal
from ctxmodes.config import load_settings
from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.host.retry import is_transient_error
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.host.run_loop import zero_usage
from ctxmodes.host.transcript import TranscriptPrinter
from ctxmodes.providers.base import ModelInfo, ModelRequest, Provider, StreamDone, StreamError
from ctxmodes.session.models import AssistantMessage, TextContent

FAST = HostOptions(retry=RetrySettings(base_delay_ms=1))


def _error(text: str) -> dict[str, Any]:
    return {"stop_reason": "error", "error_message": text}


def _answer(message: str, stop: str = "error") -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text="")],
        api="openai-responses",
        provider="openai",
        model="m",
        usage=zero_usage(),
        stop_reason=stop,  # type: ignore[arg-type]
        error_message=message,
        timestamp=1,
    )


@pytest.mark.parametrize(
    ("text", "transient"),
    [
        ("OpenAI API error (503): overloaded", True),
        ("terminated", True),
        ("Request timed out.", True),
        ("Stream ended without finish_reason", True),
        ("429 Too Many Requests", True),
        ("You exceeded your current quota: insufficient_quota (429)", False),
        ("OpenAI API error (400): invalid temperature", False),
        ("400: request exceeds the available context size (8192 tokens)", False),
    ],
)
def test_which_errors_are_transient(text: str, transient: bool) -> None:
    assert is_transient_error(_answer(text), 8192) is transient


def test_a_transient_failure_is_retried_with_backoff_and_the_file_keeps_it(make_rig) -> None:
    rig = make_rig(
        [_error("503 Service Unavailable"), _error("terminated"), text_response("done")],
        options=FAST,
    )
    rig.session.prompt("go")
    started = rig.of(records.AutoRetryStarted)
    assert [(r.attempt, r.max_attempts, r.delay_ms) for r in started] == [(1, 3, 1), (2, 3, 2)]
    assert [r.error_message for r in started] == ["503 Service Unavailable", "terminated"]
    (ended,) = rig.of(records.AutoRetryEnded)
    assert (ended.success, ended.attempt) == (True, 2)
    roles = [(m["role"], m.get("stopReason")) for m in rig.messages_in_file()]
    assert roles == [
        ("user", None),
        ("assistant", "error"),
        ("assistant", "error"),
        ("assistant", "stop"),
    ]
    # Each retry is sent the context without the failed answers.
    third = [r for r in rig.records if isinstance(r, records.ProviderRequested)][2]
    assert [m.role for m in third.request.messages] == ["user"]


def test_a_retry_never_repeats_tools_that_ran_and_never_runs_a_failed_answers_calls(
    make_rig,
) -> None:
    echo = EchoTool()
    rig = make_rig(
        [
            tool_response("echo", {"text": "once"}),
            tool_response("echo", {"text": "never"}, **_error("502 Bad Gateway")),
            text_response("done"),
        ],
        plugins=[ToolsPlugin(echo)],
        options=FAST,
    )
    rig.session.prompt("go")
    assert echo.calls == [{"text": "once"}]
    retried = [r for r in rig.records if isinstance(r, records.ProviderRequested)][-1]
    assert [m.role for m in retried.request.messages] == ["user", "assistant", "toolResult"]
    assert rig.of(records.AutoRetryEnded)[0].success is True


def test_retries_stop_after_max_retries_with_the_final_error(make_rig) -> None:
    rig = make_rig([_error("500 Internal Server Error")] * 4, options=FAST)
    rig.session.prompt("go")
    assert [r.delay_ms for r in rig.of(records.AutoRetryStarted)] == [1, 2, 4]
    (ended,) = rig.of(records.AutoRetryEnded)
    assert (ended.success, ended.attempt, ended.final_error) == (
        False,
        3,
        "500 Internal Server Error",
    )


@pytest.mark.parametrize(
    "retry", [RetrySettings(enabled=False), RetrySettings(max_retries=0, base_delay_ms=1)]
)
def test_retry_is_configurable(make_rig, retry: RetrySettings) -> None:
    rig = make_rig(
        [_error("503 overloaded"), text_response("never")], options=HostOptions(retry=retry)
    )
    rig.session.prompt("go")
    assert rig.of(records.AutoRetryStarted) == []
    assert rig.messages_in_file()[-1]["stopReason"] == "error"


def test_errors_that_a_retry_cannot_fix_are_not_retried(make_rig) -> None:
    rig = make_rig([_error("insufficient_quota: billing"), text_response("never")], options=FAST)
    rig.session.prompt("go")
    assert rig.of(records.AutoRetryStarted) == []


def test_abort_during_the_wait_cancels_the_retry(make_rig) -> None:
    rig = make_rig([_error("503"), text_response("never")], options=HostOptions())

    def abort_on_retry(record: Any) -> None:
        if isinstance(record, records.AutoRetryStarted):
            rig.session.abort()

    rig.host.subscribe(abort_on_retry)
    rig.session.prompt("go")
    (ended,) = rig.of(records.AutoRetryEnded)
    assert (ended.success, ended.final_error) == (False, "Retry cancelled")
    assert len([r for r in rig.records if isinstance(r, records.ProviderRequested)]) == 1


class _ServerWaits(Provider):
    """Fails with a server-requested wait, then answers."""

    def __init__(self, waits: list[float]) -> None:
        self._waits = waits
        self.calls = 0

    @property
    def transport(self) -> str:
        return "openai-responses"

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(provider="openai", api="openai-responses", id="m", context_window=100_000)

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[Any]:
        self.calls += 1
        if self._waits:
            yield StreamError(
                "error", _answer("429 rate limited"), retry_after_ms=self._waits.pop(0)
            )
            return
        yield StreamDone(_answer("", stop="stop").model_copy(update={"error_message": None}))


def test_a_server_requested_wait_is_honoured_up_to_the_cap(make_rig) -> None:
    from ctxmodes.host.runtime import AgentHost

    provider = _ServerWaits([30.0, 120_000.0])
    rig = make_rig(
        [], options=HostOptions(retry=RetrySettings(base_delay_ms=1, max_delay_ms=60_000))
    )
    host: AgentHost = rig.host
    host.session._core.provider = provider
    rig.session.prompt("go")
    (started,) = rig.of(records.AutoRetryStarted)
    assert started.delay_ms == 30.0  # the server's wait, longer than the 1 ms backoff
    (ended,) = rig.of(records.AutoRetryEnded)
    assert ended.success is False
    assert ended.final_error == "Server requested 120s retry delay (max: 60s). 429 rate limited"
    assert provider.calls == 2


def test_retry_settings_come_from_configuration(tmp_path) -> None:
    (tmp_path / ".ctxmodes.toml").write_text("[retry]\nmaxRetries = 5\nbaseDelayMs = 100\n")
    settings = load_settings(
        cwd=tmp_path, environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "u")}, trust=trusted
    )
    assert settings.settings.retry == RetrySettings(max_retries=5, base_delay_ms=100)


def test_the_transcript_shows_retries_as_they_happen() -> None:
    import io

    out = io.StringIO()
    printer = TranscriptPrinter(out)
    printer(records.AutoRetryStarted(attempt=1, max_attempts=3, delay_ms=2000, error_message="503"))
    printer(records.AutoRetryEnded(success=True, attempt=1))
    printer(records.AutoRetryEnded(success=False, attempt=3, final_error="503"))
    printer(records.AutoRetryEnded(success=False, attempt=0, final_error="Server requested 90s"))
    assert out.getvalue().splitlines() == [
        "[retry 1/3] in 2s after: 503",
        "[retry] succeeded on attempt 1",
        "[retry] gave up after 3: 503",
        "[retry] not retried: Server requested 90s",
    ]


def test_a_batch_run_whose_retry_succeeded_has_not_failed(make_rig) -> None:
    from ctxmodes.host.failures import FailureWatch

    rig = make_rig([_error("503 overloaded"), text_response("done")], options=FAST)
    watch = FailureWatch(rig.ui)
    rig.host.subscribe(watch)
    rig.session.prompt("go")
    watch.raise_if_failed()  # the failed turn was retried and answered


class _FlakySummaries(_ServerWaits):
    """Fails ``failures`` times with a transient error, then writes the summary."""

    def __init__(self, failures: int) -> None:
        super().__init__([])
        self._failures = failures

    def stream(self, request: ModelRequest, signal: AbortSignal) -> Iterator[Any]:
        self.calls += 1
        if self._failures:
            self._failures -= 1
            yield StreamError("error", _answer("upstream connect error: 503"))
            return
        done = _answer("", stop="stop").model_copy(
            update={"error_message": None, "content": [TextContent(text="the summary")]}
        )
        yield StreamDone(done)


@pytest.mark.parametrize(("failures", "succeeds"), [(2, True), (4, False)])
def test_summaries_are_retried_with_the_same_budget(failures: int, succeeds: bool) -> None:
    from ctxmodes.abort import AbortController
    from ctxmodes.compaction.summarize import SummarizerFailure
    from ctxmodes.host.summarizer import ProviderSummarizer
    from ctxmodes.session.models import UserMessage

    provider = _FlakySummaries(failures)
    seen: list[Any] = []
    summarize = ProviderSummarizer(
        provider,
        AbortController().signal,
        "branch_summary",
        seen.append,
        retry=RetrySettings(base_delay_ms=1),
    )
    messages = [UserMessage(content="summarize", timestamp=1)]
    if succeeds:
        assert summarize("system", messages, 100).text == "the summary"
    else:
        with pytest.raises(SummarizerFailure, match="503"):
            summarize("system", messages, 100)
    scheduled = [r for r in seen if isinstance(r, records.SummarizationRetryScheduled)]
    assert [r.delay_ms for r in scheduled] == [1, 2, 4][: min(failures, 3)]
    (finished,) = [r for r in seen if isinstance(r, records.SummarizationRetryFinished)]
    assert finished.success is succeeds
    assert provider.calls == min(failures, 3) + 1


def test_provider_request_settings_come_from_configuration(tmp_path, monkeypatch) -> None:
    import httpx

    from ctxmodes.host.runtime import AgentHost
    from ctxmodes.providers.http_model import HttpModelProvider

    (tmp_path / ".ctxmodes.toml").write_text(
        "[retry.provider]\ntimeoutMs = 1234\nmaxRetries = 2\nmaxRetryDelayMs = 500\n"
        "[providers.loop]\n"
        'api = "openai-completions"\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "sk-x"\n'
        'models = [{ id = "m" }]\n'
    )
    loaded = load_settings(
        cwd=tmp_path,
        environ={"CTXMODES_CONFIG_DIR": str(tmp_path / "u")},
        cli={"model": "loop/m"},
        trust=trusted,
    )
    host = AgentHost.from_settings(loaded.settings)
    provider = host._provider
    assert isinstance(provider, HttpModelProvider)
    sent: list[httpx.Request] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(
            503, json={"error": {"message": "busy"}}, headers={"retry-after-ms": "1"}
        )

    from ctxmodes.abort import AbortController
    from ctxmodes.providers.http import HttpSeam
    from ctxmodes.session.models import UserMessage

    provider._seam = HttpSeam(transport=httpx.MockTransport(refuse))
    request = ModelRequest(system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)])
    list(provider.stream(request, AbortController().signal))
    assert len(sent) == 3  # the first try and two transport-level retries
    assert provider._seam._clients.keys() == {1.234}
    host.close()


def test_cancelling_the_wait_ends_the_series_and_the_run(make_rig) -> None:
    rig = make_rig([_error("503"), text_response("never")], options=HostOptions())
    rig.host.subscribe(
        lambda record: (
            rig.session.abort_retry() if isinstance(record, records.AutoRetryStarted) else None
        )
    )
    rig.session.abort_retry()  # no retry waits: nothing happens
    rig.session.prompt("go")
    (ended,) = rig.of(records.AutoRetryEnded)
    assert (ended.success, ended.attempt, ended.final_error) == (False, 1, "Retry cancelled")
    assert len(rig.of(records.ProviderRequested)) == 1
    assert rig.types()[-1] == "agent_settled"
    # The run was not aborted: the next prompt runs as usual.
    rig.session.prompt("again")
    assert rig.session.messages[-1].content[0].text == "never"
