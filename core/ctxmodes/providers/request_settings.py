"""How each model request is sent: its idle timeout, the transport-level retry, and the
user's thinking budgets."""

from __future__ import annotations

from pydantic import Field

from ctxmodes.pi_spelling import PiSpelledSettings


class ProviderRetrySettings(PiSpelledSettings):
    """Pi's ``retry.provider``: each HTTP request's idle timeout and the transport-level
    retry before a stream starts (off by default, as in Pi: the turn retry covers it)."""

    timeout_ms: int = Field(default=300_000, gt=0, alias="timeoutMs")
    max_retries: int = Field(default=0, ge=0, alias="maxRetries")
    #: A server asking for a longer wait fails the request at once; 0 means no cap.
    max_retry_delay_ms: int = Field(default=60_000, ge=0, alias="maxRetryDelayMs")


class ThinkingBudgets(PiSpelledSettings):
    """Pi's ``thinkingBudgets``: the tokens a turn may think at each level, over the
    transport's own, where a format counts thinking in tokens (Anthropic's and Bedrock's
    Claude without adaptive thinking, Gemini 2.5, a Chat Completions server with a budget
    field); ``xhigh`` and ``max`` think with ``high``'s. Unset levels keep the default."""

    minimal: int | None = Field(default=None, ge=0)
    low: int | None = Field(default=None, ge=0)
    medium: int | None = Field(default=None, ge=0)
    high: int | None = Field(default=None, ge=0)

    def by_level(self) -> dict[str, int]:
        """The levels given a budget, and theirs."""
        return {level: budget for level, budget in self.model_dump().items() if budget is not None}
