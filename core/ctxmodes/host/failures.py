"""Noticing that a batch run failed (``ctxmodes run`` stops at the first failure)."""

from __future__ import annotations

from typing import TextIO

from ctxmodes.errors import CtxmodesError
from ctxmodes.host import records
from ctxmodes.host.records import HostRecord
from ctxmodes.session.models import AssistantMessage
from ctxmodes.ui import HeadlessUI, say


class RunFailedError(CtxmodesError):
    """A prompt of a batch run failed; the message says how."""


class FailureWatch:
    """A listener collecting failures: a run ending in a model error, a failed command, and
    error notifications (a plugin error, a failed automatic step) shown on ``ui``."""

    def __init__(self, ui: HeadlessUI, *, model_errors: bool = True) -> None:
        """:param model_errors: a run ending in a model error is a failure (Pi's JSON mode
        reports it as an event instead)."""
        self._ui = ui
        self._model_errors = model_errors
        self._seen_notifications = len(ui.notifications)
        self._failures: list[str] = []

    def __call__(self, record: HostRecord) -> None:
        if isinstance(record, records.AgentEnded) and self._model_errors:
            last = record.messages[-1] if record.messages else None
            if isinstance(last, AssistantMessage) and last.stop_reason == "error":
                # The line a user reads last names whose endpoint failed: the error text
                # is the vendor's own and rarely says which provider answered.
                error = last.error_message or "unknown error"
                self._failures.append(f"model error from {last.provider}/{last.model}: {error}")
        elif isinstance(record, records.AutoRetryStarted) and self._model_errors and self._failures:
            # The failed turn is being retried: it is not the run's outcome (yet).
            self._failures.pop()
        elif isinstance(record, records.CommandInvoked) and record.error is not None:
            self._failures.append(f"/{record.name}: {record.error}")

    def raise_if_failed(self) -> None:
        """Raise :class:`RunFailedError` for the first failure seen so far, if any."""
        failures = self._take()
        if failures:
            raise RunFailedError(failures[0])

    def say_failures(self, stream: TextIO) -> None:
        """Print the failures seen so far, as the UI prints an error: where the run stops on
        another error, so that none goes unsaid."""
        for failure in self._take():
            say(stream, failure, "error")

    def _take(self) -> list[str]:
        notifications = self._ui.notifications[self._seen_notifications :]
        self._seen_notifications = len(self._ui.notifications)
        # A failed command is also notified with the same text: count it once.
        errors = [text for level, text in notifications if level == "error"]
        failures = self._failures + [text for text in errors if text not in self._failures]
        self._failures = []
        return failures
