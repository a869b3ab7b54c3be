"""When the host compacts on its own, as Pi's ``AgentSession`` does.

* **After a run** (and before a prompt, which also looks at an aborted last answer): an
  answer that overflowed the context — an overflow error, or a ``length`` stop cut short by
  a full window — is compacted and the turn retried, once per prompt (a successful answer
  that overflowed is compacted without a retry); otherwise the context size the answer
  reported (estimated when it reported none) is compared with the window minus the
  reserve (``threshold``).
* **Between the turns of a run**: tool results may fill the window before the next request;
  the estimated context is checked then.

An answer no later than the latest compaction is ignored: its usage describes the context
before that compaction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ctxmodes.compaction import calculate_context_tokens, estimate_context_tokens, should_compact
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import CompactionTrigger
from ctxmodes.host import records
from ctxmodes.host.compactor import CompactionCancelled, Compactor, NothingToCompact
from ctxmodes.host.core import SessionCore
from ctxmodes.host.errors import NoModelError, SessionBusyError
from ctxmodes.host.overflow import is_context_overflow, is_recoverable_length
from ctxmodes.session.ids import timestamp_ms
from ctxmodes.session.models import AssistantMessage

OVERFLOW_RETRY_FAILED: Final = (
    "Context overflow recovery failed after one compact-and-retry attempt. Try reducing "
    "context or switching to a larger-context model."
)
TRUNCATION_RETRY_FAILED: Final = (
    "Truncated response recovery failed after one compact-and-retry attempt."
)


class AutoCompaction:
    """The automatic compactions of one session (see the module docstring)."""

    def __init__(
        self, core: SessionCore, compactor: Compactor, release_held: Callable[[], None]
    ) -> None:
        """:param release_held: delivers the input held while compacting."""
        self._core = core
        self._compactor = compactor
        self._release_held = release_held

    def after_answer(self, message: AssistantMessage, *, include_aborted: bool = False) -> bool:
        """Compact after ``message`` if it overflowed or crossed the threshold; True when
        the run should continue (the overflow retry, or messages queued meanwhile)."""
        core = self._core
        settings = core.options.compaction
        model = core.model
        if not settings.enabled or model is None:
            return False
        if message.stop_reason == "aborted" and not include_aborted:
            return False
        latest = core.latest_compaction()
        latest_ms = None if latest is None else timestamp_ms(latest.timestamp)
        if latest_ms is not None and message.timestamp <= latest_ms:
            return False
        window = model.context_window or 0
        same_model = message.provider == model.provider and message.model == model.id
        overflow = same_model and is_context_overflow(message, window)
        truncated = same_model and is_recoverable_length(message, model.max_tokens or 0)
        if overflow or truncated:
            if message.stop_reason == "stop":
                return self._compact("overflow", will_retry=False)
            if core.overflow_recovery_attempted:
                error = OVERFLOW_RETRY_FAILED if overflow else TRUNCATION_RETRY_FAILED
                core.emit(records.CompactionEnded("overflow", None, error=error))
                core.ui.notify(error, "error")
                return False
            core.overflow_recovery_attempted = True
            self._drop_failed_answer()
            return self._compact("overflow", will_retry=True)
        if not window:
            return False
        tokens = calculate_context_tokens(message.usage)
        if message.stop_reason == "error" or tokens == 0:
            estimate = estimate_context_tokens(core.messages)
            index = estimate.last_usage_index
            if index is not None and latest_ms is not None:
                source = core.messages[index]
                if isinstance(source, AssistantMessage) and source.timestamp <= latest_ms:
                    return False
            tokens = estimate.tokens
        if should_compact(int(tokens), window, settings):
            return self._compact("threshold", will_retry=False)
        return False

    def between_turns(self) -> None:
        """Before the next request of a run: compact if the context crossed the threshold."""
        core = self._core
        model = core.model
        settings = core.options.compaction
        if model is None or not model.context_window or not settings.enabled:
            return
        tokens = estimate_context_tokens(core.messages).tokens
        if should_compact(int(tokens), model.context_window, settings):
            self._compact("threshold", will_retry=False)

    def _compact(self, trigger: CompactionTrigger, *, will_retry: bool) -> bool:
        core = self._core
        try:
            with core.life.doing("compaction", inside_run=True):
                self._compactor.compact(trigger, will_retry=will_retry)
        except (NothingToCompact, CompactionCancelled, SessionBusyError, NoModelError):
            return False
        except CtxmodesError as exc:
            # The compaction_end record carries the reason; the user should see it too.
            core.ui.notify(f"automatic compaction failed: {exc}", "warning")
            return False
        finally:
            self._release_held()
        if will_retry:
            self._drop_failed_answer()
            return True
        return core.queues.has_pending()

    def _drop_failed_answer(self) -> None:
        # The failed answer stays in the file; it must not be what the retry continues from.
        messages = self._core.messages
        last = messages[-1] if messages else None
        if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "length"):
            messages.pop()
