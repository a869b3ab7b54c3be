"""The session's model as the :class:`ctxmodes.compaction.Summarizer` of compactions and
branch summaries."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxmodes.abort import AbortedError, AbortSignal
from ctxmodes.compaction.summarize import TOKEN_CAP_REASON, SummarizerFailure, SummarizerReply
from ctxmodes.host import records
from ctxmodes.host.records import HostRecord
from ctxmodes.providers.base import ModelRequest, Provider, RequestPurpose
from ctxmodes.session.models import TextContent, ToolCall, UserMessage

TOOL_CALL_REASON = "the model called a tool instead of writing the summary"


class ProviderSummarizer:
    """One summarization call per invocation: no tools, the reply's text blocks joined by
    newlines. An aborted call raises :class:`~ctxmodes.abort.AbortedError`; a failed, cut
    off or tool-calling reply raises :class:`SummarizerFailure`.

    Summarization requests have no ``ctx_provider_request`` hook (they are not turns), but
    listeners see each one as a ``provider_request`` record with its purpose.

    ``reasoning`` is the thinking level every request asks for (``None``: none).
    """

    def __init__(
        self,
        provider: Provider,
        signal: AbortSignal,
        purpose: RequestPurpose,
        emit: Callable[[HostRecord], None],
        reasoning: str | None = None,
    ) -> None:
        self._provider = provider
        self._signal = signal
        self._purpose = purpose
        self._emit = emit
        self._reasoning = reasoning

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
        self._emit(records.ProviderRequested(request, self._provider.transport))
        reply = self._provider.complete(request, self._signal)
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
