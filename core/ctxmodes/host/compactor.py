"""Compacting a session: Pi's compaction flow around the pure functions of
:mod:`ctxmodes.compaction`.

One compaction, whatever triggered it (``manual``, ``threshold``, ``overflow``)::

    compaction_start → ctx_session_before_compact (cancel, or supply the summary)
      → summarization calls (unless a plugin supplied the summary)
      → compaction entry appended as a child of the leaf → context rebuilt
      → ctx_session_compact → compaction_end

A manual compaction announces ``compaction_start`` before it looks for something to
compact (and fails when there is nothing); an automatic one only once it found something.
Failures and cancellations end with a ``compaction_end`` record carrying the reason.
"""

from __future__ import annotations

from typing import Final

from ctxmodes.abort import AbortController, AbortedError
from ctxmodes.compaction import (
    CompactionPreparation,
    estimate_messages_tokens,
    generate_compaction_summary,
    prepare_compaction,
)
from ctxmodes.errors import CtxmodesError
from ctxmodes.events import CompactionEvent, CompactionRequest, CompactionTrigger
from ctxmodes.host import records
from ctxmodes.host.core import SessionCore
from ctxmodes.host.errors import NoModelError
from ctxmodes.session.models import CompactionEntry

CANCELLED_MESSAGE: Final = "Compaction cancelled"
ALREADY_COMPACTED: Final = "Already compacted"
NOTHING_TO_COMPACT: Final = "Nothing to compact (session too small)"

_FAILURE_PREFIX: Final[dict[CompactionTrigger, str]] = {
    "manual": "Compaction failed",
    "threshold": "Auto-compaction failed",
    "overflow": "Context overflow recovery failed",
}


class CompactionCancelled(CtxmodesError):
    """A plugin cancelled the compaction, or it was aborted."""


class NothingToCompact(CtxmodesError):
    """The branch ends in a compaction, or holds too little to summarize."""


class Compactor:
    """Compactions of one session; the caller marks the session as compacting."""

    def __init__(self, core: SessionCore) -> None:
        self._core = core

    def compact(
        self,
        trigger: CompactionTrigger,
        *,
        custom_instructions: str | None = None,
        will_retry: bool = False,
    ) -> CompactionEntry:
        """Compact the active branch and return the appended entry.

        :raises NothingToCompact: there is nothing to compact.
        :raises CompactionCancelled: a plugin cancelled, or the compaction was aborted.
        :raises CtxmodesError: no model, or the summary could not be made.
        """
        core = self._core
        manual = trigger == "manual"
        if manual:
            core.emit(records.CompactionStarted(trigger))
        started = manual
        controller = AbortController()
        core.activity_controller = controller
        try:
            if core.provider is None:
                raise NoModelError("No model selected")
            branch = core.manager.get_branch()
            preparation = prepare_compaction(branch, core.options.compaction)
            if preparation is None:
                last = branch[-1] if len(branch) else None
                is_compacted = isinstance(last, CompactionEntry)
                raise NothingToCompact(ALREADY_COMPACTED if is_compacted else NOTHING_TO_COMPACT)
            if not started:
                core.emit(records.CompactionStarted(trigger))
                started = True
            request = CompactionRequest(trigger, custom_instructions, tuple(branch), preparation)
            entry, from_plugin = self._summarize_and_append(request, preparation, controller)
        except (CompactionCancelled, AbortedError) as exc:
            if started:
                core.emit(records.CompactionEnded(trigger, None, aborted=True))
            if isinstance(exc, AbortedError):
                raise CompactionCancelled(CANCELLED_MESSAGE) from None
            raise
        except CtxmodesError as exc:
            if started:
                error = f"{_FAILURE_PREFIX[trigger]}: {exc}"
                core.emit(records.CompactionEnded(trigger, None, error=error))
            raise
        finally:
            core.activity_controller = None
        core.rebuild_messages()
        # Pi's estimate of the context left: every message's own estimate, no usage.
        after = estimate_messages_tokens(core.messages)
        core.hook(core.relay.session_compact, CompactionEvent(entry, trigger, from_plugin))
        core.emit(records.CompactionAppended(entry, from_plugin))
        core.emit(
            records.CompactionEnded(
                trigger, entry, will_retry=will_retry, estimated_tokens_after=after
            )
        )
        return entry

    def _summarize_and_append(
        self,
        request: CompactionRequest,
        preparation: CompactionPreparation,
        controller: AbortController,
    ) -> tuple[CompactionEntry, bool]:
        core = self._core
        decision = core.hook(core.relay.session_before_compact, request)
        cancelled = decision is not None and decision.cancel
        supplied = decision is not None and not cancelled and decision.summary is not None
        core.emit(records.CompactionPrepared(request.trigger, cancelled, supplied))
        if decision is not None and decision.cancel:
            raise CompactionCancelled(CANCELLED_MESSAGE)
        if decision is not None and decision.summary is not None:
            summary = decision.summary
            first_kept = decision.first_kept_entry_id or preparation.first_kept_entry_id
            tokens_before = (
                decision.tokens_before
                if decision.tokens_before is not None
                else preparation.tokens_before
            )
            details, usage, from_plugin = decision.details, None, True
        else:
            model = core.model
            result = generate_compaction_summary(
                preparation,
                core.summarizer(controller.signal, "compaction", request.trigger),
                custom_instructions=request.custom_instructions,
                model_max_tokens=None if model is None else model.max_tokens,
            )
            summary, first_kept = result.summary, result.first_kept_entry_id
            tokens_before, details, usage = result.tokens_before, result.details, result.usage
            from_plugin = False
        if controller.signal.aborted:
            raise CompactionCancelled(CANCELLED_MESSAGE)
        entry_id = core.manager.append_compaction(
            summary, first_kept, int(tokens_before), details, from_plugin, usage
        )
        entry = core.manager.get_entry(entry_id)
        assert isinstance(entry, CompactionEntry)
        return entry, from_plugin
