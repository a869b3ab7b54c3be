"""The session's model as the :class:`ctxmodes.compaction.Summarizer` of compactions and
branch summaries."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxmodes.abort import AbortedError, AbortSignal
from ctxmodes.compaction.summarize import TOKEN_CAP_REASON, SummarizerFailure, SummarizerReply
from ctxmodes.host import records
from ctxmodes.host.records import HostRecord
from ctxmodes.host.retry_classify import is_transient_error
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.providers.base import ModelRequest, Provider, RequestPurpose
from ctxmodes.session.models import AssistantMessage, TextContent, ToolCall, UserMessage

TOOL_CALL_REASON = "the model called a tool instead of writing the summary"


class ProviderSummarizer:
    """One summarization call per invocation: no tools, the reply's text blocks joined by
    newlines. An aborted call raises :class:`~ctxmodes.abort.AbortedError`; a failed, cut
    off or tool-calling reply raises :class:`SummarizerFailure`.

    Summarization requests have no ``ctx_provider_request`` hook (they are not turns), but
    listeners see each one as a ``provider_request`` record with its purpose.

    ``reasoning`` is the thinking level every request asks for (``None``: none);
    ``reason`` is what set off a compaction (Pi tells it with each retry).
    """

    def __init__(
        self,
        provider: Provider,
        signal: AbortSignal,
        purpose: RequestPurpose,
        emit: Callable[[HostRecord], None],
        reasoning: str | None = None,
        retry: RetrySettings | None = None,
        reason: str | None = None,
    ) -> None:
        self._provider = provider
        self._signal = signal
        self._purpose = purpose
        self._emit = emit
        self._reasoning = reasoning
        self._retry = retry if retry is not None else RetrySettings(enabled=False)
        self._reason = reason

    def __call__(
        self, system_prompt: str, messages: Sequence[UserMessage], max_tokens: int
    ) -> SummarizerReply:
        self._signal.raise_if_aborted()
        request = ModelRequest(
            system_prompt=system_prompt,
            messages=list(messages),
            max_tokens=max_tokens,
            purpose=self._purpose,
            reasoning=self._reasoning,
        )
        reply = self._complete(request)
        if reply.stop_reason == "aborted" or self._signal.aborted:
            raise AbortedError(self._signal.reason or "aborted")
        if reply.stop_reason == "error":
            raise SummarizerFailure(reply.error_message or "the model reported an error")
        if reply.stop_reason == "length":
            raise SummarizerFailure(TOKEN_CAP_REASON)
        if any(isinstance(block, ToolCall) for block in reply.content):
            raise SummarizerFailure(TOOL_CALL_REASON)
        text = "\n".join(block.text for block in reply.content if isinstance(block, TextContent))
        return SummarizerReply(text=text, usage=reply.usage)

    def _complete(self, request: ModelRequest) -> AssistantMessage:
        """The reply, retried on transient errors with the turns' budget and backoff (Pi's
        ``retryAssistantCall``); each retry is a ``summarization_retry`` record."""
        settings = self._retry
        budget = settings.max_retries if settings.enabled else 0
        attempt = 0
        while True:
            self._emit(records.ProviderRequested(request, self._provider.transport))
            reply = self._provider.complete(
                request,
                self._signal,
                lambda retry: self._emit(records.TransportRetryScheduled.of(retry)),
            )
            # Pi classifies summary failures by their text alone (no context-window check).
            if attempt >= budget or not is_transient_error(reply, 0):
                if attempt:
                    self._emit(
                        records.SummarizationRetryFinished(
                            success=reply.stop_reason not in ("error", "aborted"), attempt=attempt
                        )
                    )
                return reply
            attempt += 1
            delay = settings.base_delay_ms * 2 ** (attempt - 1)
            self._emit(
                records.SummarizationRetryScheduled(
                    attempt=attempt,
                    max_attempts=budget,
                    delay_ms=delay,
                    error_message=reply.error_message or "Unknown error",
                )
            )
            if self._signal.wait(delay / 1000):
                self._emit(records.SummarizationRetryFinished(success=False, attempt=attempt))
                return reply.model_copy(update={"stop_reason": "aborted", "error_message": None})
            self._emit(self._attempt_started())

    def _attempt_started(self) -> records.SummarizationRetryAttemptStarted:
        if self._purpose == "compaction":
            return records.SummarizationRetryAttemptStarted("compaction", self._reason)
        return records.SummarizationRetryAttemptStarted("branchSummary")
