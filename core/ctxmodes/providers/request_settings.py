"""How each model request is sent: its idle timeout and the transport-level retry."""

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
