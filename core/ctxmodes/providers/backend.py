"""A provider's backend beside its model: where a mode may call the same service, with the
provider's own credentials.

The Codex backend answers more than model requests: its ``alpha/history/v2/*`` and
``alpha/notes/v2/*`` endpoints live under the same base URL and take the same account
credentials. A provider that reaches such a backend implements :class:`BackendAccess`; the
Remote mode calls the backend through it and through nothing else, so credentials, TLS
settings and the HTTP client stay the provider's (and a test injects a transport there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import httpx

#: What Codex sends as ``x-openai-tool-output-truncation-policy`` when the model catalog
#: names no policy of its own.
DEFAULT_TRUNCATION_POLICY: Mapping[str, Any] = {"mode": "tokens", "limit": 10_000}


@dataclass(frozen=True, slots=True)
class BackendRoute:
    """How to reach the provider's backend for one call.

    :ivar base_url: the backend base, without a trailing slash
        (``https://chatgpt.com/backend-api/codex``); paths such as
        ``alpha/notes/v2/write_file`` are appended after a ``/``.
    :ivar headers: the provider's authentication and identity headers (``authorization``,
        ``chatgpt-account-id``, ``originator``, ``version``, ``user-agent``), current at the
        time of the call; never logged.
    :ivar client: the HTTP client to send with; owned (and closed) by the provider.
    :ivar truncation_policy: the model's tool-output truncation policy, sent as JSON.
    """

    base_url: str
    headers: Mapping[str, str]
    client: httpx.Client
    truncation_policy: Mapping[str, Any] = field(
        default_factory=lambda: dict(DEFAULT_TRUNCATION_POLICY)
    )

    def url(self, path: str) -> str:
        return f"{self.base_url.rstrip('/')}/{path.lstrip('/')}"


@runtime_checkable
class BackendAccess(Protocol):
    """Implemented by providers whose service also answers backend calls (Codex)."""

    def backend_route(self) -> BackendRoute:
        """The route for the next backend call (fresh credentials each time).

        :raises ProviderError: the backend cannot be reached with the current credentials.
        """
