"""A headless :class:`~ctxmodes.hostapi.UserInterface` for tests, the CLI and batch runs.

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO

from ctxmodes.hostapi import NotifyLevel


@dataclass
class HeadlessUI:
    """Keeps editor text in memory, records notifications, answers confirmations by policy.

    :param confirm_answer: what every confirmation returns.
    :param echo: where notifications are printed as they happen (``None``: nowhere), their
        control characters shown, never obeyed.
    :param echo_errors: whether errors are printed too (not where the command reports each
        as its own failure, :class:`~ctxmodes.host.failures.FailureWatch`).
    """

    confirm_answer: bool = False
    echo: TextIO | None = None
    echo_errors: bool = True
    editor_text: str = ""
    notifications: list[tuple[NotifyLevel, str]] = field(default_factory=list)

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self.notifications.append((level, message))
        if self.echo is not None and (level != "error" or self.echo_errors):
            say(self.echo, message, level)

    def confirm(self, title: str, message: str) -> bool:
        self.notify(f"{title}: {message} -> {'yes' if self.confirm_answer else 'no'}")
        return self.confirm_answer

    def get_editor_text(self) -> str:
        return self.editor_text

    def set_editor_text(self, text: str) -> None:
        self.editor_text = text


def say(stream: TextIO, message: str, level: NotifyLevel) -> None:
    """``message`` as a headless UI prints it: after its level, unless it is news."""
    from ctxmodes.terminal_text import visible_lines

    prefix = "" if level == "info" else f"{level}: "
    print(f"{prefix}{visible_lines(message)}", file=stream)


def stderr_ui() -> HeadlessUI:
    """The CLI's UI: notifications go to standard error."""
    return HeadlessUI(echo=sys.stderr)
