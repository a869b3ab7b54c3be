"""What the footer says and when it is recomputed: the session's tokens and cost, the current
activity, plugins' status texts and the countdown of a retry wait. The footer is drawn on
every frame, so its text is built only on the events that change it.

An activity Esc stops says so as Pi's loaders say it, with the key bound now:
``Retrying (1/3) in 5s... (escape to cancel)`` (:func:`cancel_hint`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import StyleAndTextTuples

from ctxmodes.providers.auth import AuthResolver
from ctxmodes.tui.footer import FooterLines, FooterState, footer_lines
from ctxmodes.tui.git_branch import GitBranch
from ctxmodes.tui.keymap import KeyMap
from ctxmodes.tui.usage_totals import SessionUsage

if TYPE_CHECKING:
    from ctxmodes.sdk import Agent


def cancel_hint(keymap: KeyMap) -> str:
    """Pi's ``(escape to cancel)`` after a loader's text: the key of ``app.interrupt``."""
    return f"({keymap.text('app.interrupt')} to cancel)"


class FooterStatus:
    """The footer's state and its text, rebuilt by :meth:`refresh`.

    :param clock: monotonic seconds, for the retry countdown.
    :param keymap: the keys bound now, for the key that cancels a retry's wait.
    """

    def __init__(
        self, agent: Agent, clock: Callable[[], float], keymap: Callable[[], KeyMap]
    ) -> None:
        self._agent = agent
        self._clock = clock
        self._keymap = keymap
        self.usage = SessionUsage()
        self.activity: str | None = None
        self.statuses: dict[str, str] = {}
        #: When the next retry attempt starts (``clock`` seconds), during a retry wait.
        self.retry_at: float | None = None
        #: The attempt waited for and how many there may be, during a retry wait.
        self._retry_attempt = (0, 0)
        self._footer = FooterLines(("", ""), ())
        self._git: GitBranch | None = None

    def refresh(self) -> None:
        """Rebuild the footer (with the usage of the entries the session gained since)."""
        agent = self._agent
        session = agent.session
        usage = self.usage.update(agent.session_manager)
        model = session.model
        if self._git is None or self._git.cwd != session.cwd:
            self._git = GitBranch(session.cwd)
        self._footer = footer_lines(
            FooterState(
                cwd=session.cwd,
                branch=self._git.name,
                session_name=agent.session_manager.get_session_name(),
                model=None if model is None else f"{model.provider}/{model.id}",
                mode=agent.mode,
                thinking=agent.thinking_level,
                context=agent.context_state(),
                token_stats=usage.stats(),
                cost=usage.cost,
                subscription=model is not None
                and AuthResolver().bills_subscription(model.provider),
                statuses=self.statuses,
            )
        )

    def check_branch(self) -> bool:
        """Rebuild the footer if the git branch changed since; whether it did."""
        if self._git is None or not self._git.check():
            return False
        self.refresh()
        return True

    def fragments(self, width: int = 0) -> StyleAndTextTuples:
        """The footer fitted to ``width`` columns (``0``: its two lines, however long)."""
        if not self.activity:
            return self._footer.fragments(width)
        # The activity changes often, so it is added here on every frame; everything else is
        # rebuilt only on the events that refresh it.
        return self._footer.with_part(("class:footer.activity", self.activity)).fragments(width)

    def set_status(self, key: str, text: str | None) -> None:
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text

    def retry_in(self, delay_ms: float, attempt: int, max_attempts: int) -> None:
        self.retry_at = self._clock() + delay_ms / 1000
        self._retry_attempt = (attempt, max_attempts)

    def tick_retry(self) -> float | None:
        """Show the countdown to the next attempt in Pi's words; the seconds until it next
        changes, or ``None`` when the wait is over (the attempt is then the run's work)."""
        if self.retry_at is None:
            return None
        left = self.retry_at - self._clock()
        if left <= 0:
            self.activity = "working"
            return None
        attempt, most = self._retry_attempt
        hint = cancel_hint(self._keymap())
        self.activity = f"Retrying ({attempt}/{most}) in {math.ceil(left)}s... {hint}"
        return min(1.0, left)
