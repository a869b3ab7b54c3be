"""Retrying a turn that failed on a transient error, as Pi's ``AgentSession`` does.

After a run ends with an assistant message whose error looks transient (overload, rate
limit, a 5xx, a dropped connection, a timeout, a stream cut short — Pi's patterns, minus
quota and billing errors and minus context overflows, which compaction handles), the failed
message leaves the context (the session file keeps it), the host waits and continues the
run from the same context. Waits are ``base_delay_ms · 2^(attempt-1)`` (2 s, 4 s, 8 s by
default) for at most ``max_retries`` attempts; the first answer that is not an error ends
the series. A failed answer never ran its tool calls (a run stops at an error), so a retry
never repeats a tool that already ran: it continues from the results that exist.

One difference from Pi, on purpose: a server that said how long to wait (``Retry-After``,
``retry-after-ms``) is waited for (if longer than the backoff), up to ``max_delay_ms``;
asking for longer ends the series at once, where Pi would retry after its own backoff into
the same refusal.

Every step is a host record (``auto_retry_start``, ``auto_retry_end``, Pi's names), so a
front end shows the retry as it happens; an abort during the wait cancels it, and so does
:meth:`AgentRetry.cancel_wait` (which stops nothing else).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from ctxmodes.abort import AbortController
from ctxmodes.host import records
from ctxmodes.host.core import SessionCore
from ctxmodes.host.retry_classify import is_transient_error
from ctxmodes.host.retry_settings import RetrySettings
from ctxmodes.session.models import AgentMessage, AssistantMessage

RETRY_CANCELLED: Final = "Retry cancelled"


class AgentRetry:
    """The retry series of one session (see the module docstring)."""

    def __init__(self, core: SessionCore) -> None:
        self._core = core
        self._attempt = 0
        #: Stops the wait before the next attempt while it lasts.
        self._waiting: AbortController | None = None

    @property
    def settings(self) -> RetrySettings:
        return self._core.options.retry

    def answer_ended(self, message: AssistantMessage) -> None:
        """Every assistant message: one that is not an error ends a series successfully."""
        if message.stop_reason != "error" and self._attempt > 0:
            self._core.emit(records.AutoRetryEnded(success=True, attempt=self._attempt))
            self._attempt = 0

    def will_retry(self, messages: Sequence[AgentMessage]) -> bool:
        """Whether a run that added ``messages`` will be retried, as Pi's ``willRetry`` of
        ``agent_end``: retries are on and left, and its last answer failed transiently."""
        settings = self.settings
        if not settings.enabled or self._attempt >= settings.max_retries:
            return False
        last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        core = self._core
        window = core.model.context_window if core.model is not None else 0
        return last is not None and is_transient_error(last, window or 0)

    def after_run(self, message: AssistantMessage, server_wait_ms: float | None) -> bool:
        """After a run that ended with ``message``: True when the run should continue (the
        wait is over), False when the failure stands (the series' end is recorded)."""
        core = self._core
        window = core.model.context_window if core.model is not None else 0
        if is_transient_error(message, window or 0) and self._prepare(message, server_wait_ms):
            return True
        if message.stop_reason == "error" and self._attempt > 0:
            self._end(message.error_message)
        return False

    def _prepare(self, message: AssistantMessage, server_wait_ms: float | None) -> bool:
        settings = self.settings
        if not settings.enabled or self._attempt >= settings.max_retries:
            return False
        error = message.error_message or "Unknown error"
        delay: float = settings.base_delay_ms * 2**self._attempt
        if server_wait_ms is not None and server_wait_ms > delay:
            cap = settings.max_delay_ms
            if cap and server_wait_ms > cap:
                self._end(
                    f"Server requested {math.ceil(server_wait_ms / 1000)}s retry delay "
                    f"(max: {math.ceil(cap / 1000)}s). {error}"
                )
                return False
            delay = server_wait_ms
        self._attempt += 1
        core = self._core
        # Set before the start is announced, so a listener may already cancel the wait.
        controller = AbortController()
        core.activity_controller = self._waiting = controller
        try:
            core.emit(
                records.AutoRetryStarted(
                    attempt=self._attempt,
                    max_attempts=settings.max_retries,
                    delay_ms=delay,
                    error_message=error,
                )
            )
            # The failed answer stays in the file; the retry continues from before it.
            if core.messages and core.messages[-1] is message:
                core.messages.pop()
            if core.abort_requested or controller.signal.wait(delay / 1000):
                self._end(RETRY_CANCELLED)
                return False
        finally:
            core.activity_controller = self._waiting = None
        return True

    def cancel_wait(self) -> None:
        """Cancel the retry being waited for, if any (Pi's ``abortRetry``): the series
        ends as cancelled and the failed answer stands; nothing else is stopped."""
        waiting = self._waiting
        if waiting is not None:
            waiting.abort()

    def _end(self, final_error: str | None) -> None:
        attempt, self._attempt = self._attempt, 0
        self._core.emit(
            records.AutoRetryEnded(success=False, attempt=attempt, final_error=final_error)
        )
