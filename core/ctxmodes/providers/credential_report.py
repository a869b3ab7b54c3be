"""What ``ctxmodes auth`` reports: whether a provider is ready to be called, and the key or
token it would be called with, for another program to use, as Pi's ``pi auth`` reports them.

A check's answer is Pi's: ``ready`` with the kind of credential (``api_key`` or ``oauth``),
``not_ready`` with why (``provider_not_found``, ``credentials_not_configured``,
``credential_not_available``), or ``invalid`` (``invalid_state``: a credential file that
cannot be read, a refresh that failed, a model that names nothing). A credential is the key
a request would send, or the token of its bearer header; an OAuth token is renewed first
when it expires within the margin asked for. Where Pi reads its own ``auth.json``, ctxmodes
reads its own file first, then Pi's (:mod:`ctxmodes.providers.auth`).

Internal to ctxmodes: not part of the API plugins and programs use (see :mod:`ctxmodes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.auth import AUTHENTICATED, AuthResolver, ResolvedAuth
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.cli_model import ModelNotFoundError, resolve_cli_model
from ctxmodes.providers.oauth import MINIMUM_VALIDITY_MS

if TYPE_CHECKING:
    from ctxmodes.providers.registry import ProviderRegistry

CredentialKind = Literal["api_key", "bearer_token"]
#: How long a printed bearer token must stay valid unless asked otherwise (Pi's 30 minutes).
BEARER_TOKEN_VALIDITY_MS: Final = 30 * 60 * 1000
#: The exit status of each answer of a check, as Pi's.
CHECK_EXIT: Final = {"ready": 0, "not_ready": 1, "invalid": 2}


@dataclass(frozen=True, slots=True)
class AuthCheck:
    """One provider's readiness: ``auth_type`` when ready, else ``reason``."""

    status: Literal["ready", "not_ready", "invalid"]
    provider: str
    auth_type: str | None = None
    reason: str | None = None

    def as_json(self, credential: str | None = None) -> dict[str, str]:
        """Pi's JSON answer: its keys, in its order."""
        answer = {"status": self.status, "provider": self.provider}
        if self.auth_type is not None:
            answer["authType"] = self.auth_type
        if self.reason is not None:
            answer["reason"] = self.reason
        if credential:
            answer["credentials"] = credential
        return answer


class CredentialReport:
    """Checks and credentials over ``registry``'s models (the providers known are theirs),
    read through ``resolver``, which renews OAuth tokens as requests do."""

    def __init__(self, registry: ProviderRegistry, resolver: AuthResolver) -> None:
        self._registry = registry
        self._models = list(registry.models)
        self._resolver = resolver

    def provider_of(self, provider: str | None, model: str | None) -> str:
        """The provider ``--provider`` and ``--model`` name: the model's, when one is given
        (under a known ``--provider``, an id its catalog lacks is the provider's, as Pi
        makes a model of it).

        :raises CtxmodesError: the model names nothing (Pi's words), or neither is given.
        """
        if model:
            return self._model(model, provider, custom_ok=True).provider
        if not provider:
            raise CtxmodesError("Unable to resolve an auth provider")
        return provider

    def check(self, provider: str, *, refresh: bool) -> AuthCheck:
        """Whether ``provider`` can be called; with ``refresh``, its OAuth token is renewed
        when due, as a request would, and a failure to is ``invalid``."""
        if not self._known(provider):
            return AuthCheck("not_ready", provider, reason="provider_not_found")
        configured = self._configured_key(provider)
        try:
            if self._resolver.status(provider, configured) is None:
                return AuthCheck("not_ready", provider, reason="credentials_not_configured")
            if refresh and self._resolver.resolve(provider, configured) is None:
                return AuthCheck("not_ready", provider, reason="credentials_not_configured")
            stored = self._resolver.stored(provider)
        except CtxmodesError:
            return AuthCheck("invalid", provider, reason="invalid_state")
        oauth = stored is not None and stored[1]["type"] == "oauth"
        return AuthCheck("ready", provider, auth_type="oauth" if oauth else "api_key")

    def credential(self, provider: str, *, refresh: bool) -> str | None:
        """The credential ``provider``'s requests go with (without ``refresh``, a stored
        OAuth token as it is, due or not); ``None``: none is a key or a bearer token.

        :raises CtxmodesError: a credential file that cannot be read, a refresh that failed.
        """
        stored = self._resolver.stored(provider)
        if not refresh and stored is not None and stored[1]["type"] == "oauth":
            return str(stored[1]["access"])
        return credential_value(self._resolver.resolve(provider, self._configured_key(provider)))

    def printed(
        self,
        kind: CredentialKind,
        provider: str | None,
        model: str | None,
        validity_ms: int | None = None,
    ) -> str:
        """The one API key (``api_key``) or OAuth bearer token (``bearer_token``) the
        provider ``--provider`` names has, or that the one provider with stored credentials
        whose models ``--model`` names has. A bearer token is renewed when it expires within
        ``validity_ms`` (default 30 minutes).

        :raises CtxmodesError: in Pi's words: neither a provider nor a model, an unknown
            provider or model, none or several credentials of that kind.
        """
        if not provider and not model:
            raise CtxmodesError(
                "Credential printing requires --provider <provider> or --model <model>"
            )
        kinds = {name: entry["type"] for name, entry in self._stored_entries().items()}
        if provider:
            if not self._known(provider):
                raise CtxmodesError(
                    f'Unknown provider "{provider}". Use --list-models to see available providers.'
                )
            if model:
                self._model(model, provider, custom_ok=True)
            providers = [provider]
        else:
            providers = [
                name for name in self._providers() if name in kinds and self._serves(name, model)
            ]
            if not providers:
                raise CtxmodesError(
                    f'Model "{model}" not found. Use --list-models to see available models.'
                )
        wanted_oauth = kind == "bearer_token"
        margin = MINIMUM_VALIDITY_MS
        if wanted_oauth:
            margin = BEARER_TOKEN_VALIDITY_MS if validity_ms is None else validity_ms
        found: list[tuple[str, str]] = []
        for name in providers:
            if (kinds.get(name) == "oauth") != wanted_oauth:
                continue
            resolved = self._resolver.resolve(name, self._configured_key(name), validity_ms=margin)
            value = credential_value(resolved)
            if value:
                found.append((name, value))
        if len(found) == 1:
            return found[0][1]
        if found:
            names = ", ".join(name for name, _ in found)
            raise CtxmodesError(
                f"Multiple configured providers matched ({names}). Specify --provider."
            )
        first = providers[0]
        if provider and not wanted_oauth and kinds.get(first) == "oauth":
            raise CtxmodesError(f'Provider "{first}" is configured with OAuth, not an API key')
        if provider and wanted_oauth and kinds.get(first) != "oauth":
            raise CtxmodesError(f'Provider "{first}" is not configured with an OAuth bearer token')
        what = "OAuth bearer token" if wanted_oauth else "API key"
        raise CtxmodesError(f"No usable {what} is configured")

    def _model(self, pattern: str, provider: str | None, *, custom_ok: bool = False) -> ModelSpec:
        """The model ``pattern`` names (under ``provider``), as ``--model`` reads it; with
        ``custom_ok``, an id a known provider's catalog lacks is that provider's first model
        (Pi makes a model of it, whose credentials are the provider's)."""
        try:
            found = resolve_cli_model(
                pattern, self._models, self._registry.has_credentials, provider
            )
        except ModelNotFoundError:
            if custom_ok and provider and self._known(provider):
                return next(m for m in self._models if m.provider == provider)
            raise
        return found.model

    def _serves(self, provider: str, pattern: str | None) -> bool:
        """Whether ``pattern`` names a model of ``provider``'s catalog."""
        if not pattern:
            return False
        try:
            self._model(pattern, provider)
        except CtxmodesError:
            return False
        return True

    def _providers(self) -> list[str]:
        return list(dict.fromkeys(model.provider for model in self._models))

    def _known(self, provider: str) -> bool:
        return any(model.provider == provider for model in self._models)

    def _configured_key(self, provider: str) -> str | None:
        """The key the configuration (``models.json``) gives ``provider``'s models."""
        return next((m.api_key for m in self._models if m.provider == provider), None)

    def _stored_entries(self) -> dict[str, dict[str, object]]:
        """Each provider's stored credential, the one requests use (ctxmodes' file first)."""
        entries: dict[str, dict[str, object]] = {}
        for name in self._providers():
            found = self._resolver.stored(name)
            if found is not None:
                entries[name] = dict(found[1])
        return entries


def credential_value(resolved: ResolvedAuth | None) -> str | None:
    """The key a request sends, or the token of its bearer header (``None``: neither, as
    for credentials the transport finds itself, such as an AWS profile)."""
    if resolved is None:
        return None
    if resolved.api_key and resolved.api_key != AUTHENTICATED:
        return resolved.api_key
    for name, value in (resolved.headers or {}).items():
        if name.lower() == "authorization" and value and value.lower().startswith("bearer "):
            return value[len("bearer ") :].strip() or None
    return None
