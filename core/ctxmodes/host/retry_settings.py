"""The retry settings (Pi's ``retry`` section), apart from the host so configuration can
validate them without importing it."""

from __future__ import annotations

from pydantic import Field

from ctxmodes.pi_spelling import PiSpelledSettings
from ctxmodes.providers.request_settings import ProviderRetrySettings


class RetrySettings(PiSpelledSettings):
    """Pi's ``retry`` settings (same names and defaults), plus the cap on a server's wait."""

    enabled: bool = True
    max_retries: int = Field(default=3, ge=0, alias="maxRetries")
    base_delay_ms: int = Field(default=2000, ge=0, alias="baseDelayMs")
    #: The longest wait a server may ask for (``Retry-After``); 0 means no cap.
    max_delay_ms: int = Field(default=60_000, ge=0, alias="maxDelayMs")
    provider: ProviderRetrySettings = Field(default_factory=ProviderRetrySettings)
