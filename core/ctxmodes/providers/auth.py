"""Which credentials a provider's requests use, resolved in Pi's order.

pi-ai (``resolveProviderAuth``) and pi-coding-agent (``composeApiKeyAuth``) agree on this:

0. A **key given for this run** (``--api-key``, Pi's runtime key) wins over everything: it
   is held by the process, never written (:func:`set_runtime_api_key`).
1. A **stored credential** owns the provider: ctxmodes' own credential file (``ctxmodes
   login``), else Pi's ``auth.json``. An ``api_key`` entry's ``key`` is a configuration
   value (:mod:`~ctxmodes.providers.config_values`) read with the entry's ``env`` first; an
   ``oauth`` entry gives its access token, refreshed under Pi's lock when it has less than
   five minutes left and ctxmodes knows the provider's refresh (:mod:`.oauth`).
2. Else the **configured key** of a ``models.json`` provider or a ``[providers.<name>]``
   table.
3. Else the **environment**: the variables Pi reads for the provider, in Pi's order
   (``ANTHROPIC_AUTH_TOKEN`` is sent as ``Authorization: Bearer``, not as a key), and the
   ambient credentials of the cloud providers (AWS for Bedrock, Google's application
   default credentials for Vertex); for ChatGPT, the Codex CLI's own login.

:meth:`AuthResolver.status` answers "would this provider have credentials" the way Pi's
``/model`` does: it runs no command and sends nothing over the network.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ctxmodes.providers import config_values
from ctxmodes.providers.catalog import ModelSpec, builtin_providers
from ctxmodes.providers.credential_store import Credential, FileCredentialStore
from ctxmodes.providers.credentials import (
    CredentialError,
    codex_cli_token,
    ctxmodes_credentials_path,
    pi_agent_dir,
)
from ctxmodes.providers.oauth import MINIMUM_VALIDITY_MS, Refresh, current_access_token

#: What Pi calls a value that stands for ambient credentials the transport finds itself.
AUTHENTICATED: Final = "<authenticated>"
ANTHROPIC_AUTH_TOKEN: Final = "ANTHROPIC_AUTH_TOKEN"
VERTEX_ADC_PATH: Final = Path("~/.config/gcloud/application_default_credentials.json")
_AWS_AMBIENT: Final = (
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)
#: Variables beside the per-provider keys that make a provider usable (cloud credentials,
#: accounts, projects).
AMBIENT_VARIABLES: Final = (
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    *_AWS_AMBIENT,
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_GATEWAY_ID",
)


#: The source a key given for the run is reported as (never the key).
RUNTIME_KEY_SOURCE: Final = "--api-key"
#: Provider → the key given for this run; the process's own, as Pi's runtime credentials.
_runtime_keys: dict[str, str] = {}


def set_runtime_api_key(provider: str, key: str) -> None:
    """Make ``key`` ``provider``'s credential for the rest of the process, over any stored,
    configured or environment credential (Pi's ``--api-key``). Nothing is written."""
    _runtime_keys[provider] = key


@dataclass(frozen=True)
class ResolvedAuth:
    """What a request authenticates with; ``source`` says where it came from (never the
    secret). ``api_key`` is ``None`` when the transport authenticates otherwise (headers,
    AWS or Google credentials it finds itself)."""

    source: str
    api_key: str | None = field(default=None, repr=False)
    #: Headers to send (``None``: one not to send, e.g. the bearer header a gateway's own
    #: authorization replaces).
    headers: Mapping[str, str | None] = field(default_factory=dict, repr=False)
    #: Provider-scoped variables (an ``auth.json`` entry's ``env``), which win over the
    #: process environment for this provider's settings.
    env: Mapping[str, str] = field(default_factory=dict, repr=False)


def credential_variables() -> list[str]:
    """Every environment variable that can give a built-in provider credentials."""
    keys = {name for info in builtin_providers().values() for name in info.env_keys}
    return sorted(keys | set(AMBIENT_VARIABLES))


def env_keys(provider: str) -> list[str]:
    """The variables Pi reads ``provider``'s key from, in Pi's order."""
    info = builtin_providers().get(provider)
    return list(info.env_keys) if info is not None else []


def _valid_entry(entry: object) -> bool:
    """Pi's ``auth.json`` entry shapes (``ReadOnlyAuthStorage``)."""
    if not isinstance(entry, dict):
        return False
    if entry.get("type") == "api_key":
        env = entry.get("env")
        return (entry.get("key") is None or isinstance(entry.get("key"), str)) and (
            env is None or (isinstance(env, dict) and all(isinstance(v, str) for v in env.values()))
        )
    if entry.get("type") == "oauth":
        expires = entry.get("expires")
        return (
            isinstance(entry.get("access"), str)
            and isinstance(entry.get("refresh"), str)
            and isinstance(expires, int | float)
            and not isinstance(expires, bool)
        )
    return False


class AuthResolver:
    """Resolves credentials per provider (see the module docstring).

    :param refreshers: per provider, how to renew an OAuth credential (ctxmodes knows
        ChatGPT's and Anthropic's); other providers' expired tokens are an error that says
        to log in again.
    :param now_ms: the clock OAuth expiry is judged by.
    :param runtime_keys: per provider, a key given for the run (default: the process's,
        see :func:`set_runtime_api_key`).
    """

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        refreshers: Mapping[str, Refresh] | None = None,
        now_ms: Callable[[], int] | None = None,
        runtime_keys: Mapping[str, str] | None = None,
    ) -> None:
        from ctxmodes.providers.wire import wall_clock_ms

        self.environ = os.environ if environ is None else environ
        self._runtime_keys = _runtime_keys if runtime_keys is None else runtime_keys
        self._refreshers = dict(refreshers or {})
        self._now_ms = now_ms or wall_clock_ms

    def stores(self) -> list[FileCredentialStore]:
        """ctxmodes' own credential file, then Pi's ``auth.json``."""
        return [
            FileCredentialStore(ctxmodes_credentials_path(self.environ)),
            FileCredentialStore(pi_agent_dir(self.environ) / "auth.json"),
        ]

    def stored(self, provider: str) -> tuple[FileCredentialStore, Credential] | None:
        """The first stored entry for ``provider`` and the store holding it.

        :raises CredentialError: a file is corrupt, or the entry is not one Pi would accept.
        """
        for store in self.stores():
            entry = store.read(provider)
            if entry is None:
                continue
            if not _valid_entry(entry):
                raise CredentialError(
                    f"{store.path} has an invalid credential for provider {provider!r}"
                )
            return store, entry
        return None

    def bills_subscription(self, provider: str) -> bool:
        """Whether ``provider``'s calls are paid by a subscription, as Pi's footer tells it
        (and then marks the cost ``(sub)``): a login stored for a provider whose sign-in is a
        subscription (Claude Pro/Max, ChatGPT Plus/Pro …), or Kimi Code, whose API keys are a
        subscription's. Runs no command, refreshes nothing; a corrupt credential file is no
        subscription.
        """
        if provider == "kimi-coding":
            return True
        info = builtin_providers().get(provider)
        if info is None or info.oauth is None or not info.oauth.subscription:
            return False
        try:
            found = self.stored(provider)
        except CredentialError:
            return False
        return found is not None and found[1]["type"] == "oauth"

    def _variable(self, name: str, scoped: Mapping[str, str] | None = None) -> str | None:
        value = (scoped or {}).get(name) or self.environ.get(name)
        return value if value and value.strip() else None

    # ------------------------------------------------------------ presence only

    def status(self, provider: str, configured_key: str | None = None) -> str | None:
        """Where ``provider``'s credentials would come from, or ``None`` without any.
        Runs no command, refreshes nothing.

        :raises CredentialError: a credential file is corrupt.
        """
        if provider in self._runtime_keys:
            return RUNTIME_KEY_SOURCE
        found = self.stored(provider)
        if found is not None:
            store, entry = found
            kind = "OAuth" if entry["type"] == "oauth" else "API key"
            return f"{kind} in {store.path}"
        if configured_key is not None:
            if config_values.is_configured(configured_key, environ=self.environ):
                return "configured API key"
            return None
        return self._ambient_source(provider)

    def _ambient_source(self, provider: str, scoped: Mapping[str, str] | None = None) -> str | None:
        if provider.startswith("cloudflare-"):
            needed = ["CLOUDFLARE_API_KEY", "CLOUDFLARE_ACCOUNT_ID"]
            if provider == "cloudflare-ai-gateway":
                needed.append("CLOUDFLARE_GATEWAY_ID")
            return "CLOUDFLARE_API_KEY" if all(self._variable(n, scoped) for n in needed) else None
        for name in env_keys(provider):
            if self._variable(name, scoped):
                return name
        if provider == "amazon-bedrock":
            return self._aws_source(scoped)
        if provider == "google-vertex":
            return self._vertex_source(scoped)
        if provider == "openai-codex" and codex_cli_token(self.environ):
            return "Codex CLI login"
        return None

    def _aws_source(self, scoped: Mapping[str, str] | None) -> str | None:
        if self._variable("AWS_BEARER_TOKEN_BEDROCK", scoped):
            return "AWS_BEARER_TOKEN_BEDROCK"
        if self._variable("AWS_PROFILE", scoped):
            return "AWS_PROFILE"
        if self._variable("AWS_ACCESS_KEY_ID", scoped) and self._variable(
            "AWS_SECRET_ACCESS_KEY", scoped
        ):
            return "AWS access keys"
        for name in _AWS_AMBIENT:
            if self._variable(name, scoped):
                return name
        return None

    def _vertex_source(self, scoped: Mapping[str, str] | None) -> str | None:
        explicit = self._variable("GOOGLE_APPLICATION_CREDENTIALS", scoped)
        path = Path(explicit) if explicit else VERTEX_ADC_PATH
        project = self._variable("GOOGLE_CLOUD_PROJECT", scoped) or self._variable(
            "GCLOUD_PROJECT", scoped
        )
        location = self._variable("GOOGLE_CLOUD_LOCATION", scoped)
        if path.expanduser().exists() and project and location:
            return "gcloud application default credentials"
        return None

    # ------------------------------------------------------------ for a request

    def resolve(
        self,
        provider: str,
        configured_key: str | None = None,
        *,
        validity_ms: int = MINIMUM_VALIDITY_MS,
    ) -> ResolvedAuth | None:
        """The credentials for one request to ``provider``, or ``None`` without any; an
        OAuth token is renewed first when it expires within ``validity_ms``.

        :raises CredentialError: a file is corrupt, a stored key or configured command has
            no value, or an OAuth token expired and cannot be renewed.
        """
        runtime_key = self._runtime_keys.get(provider)
        if runtime_key is not None:
            if provider.startswith("cloudflare-"):
                return self._cloudflare(provider, runtime_key, None, RUNTIME_KEY_SOURCE)
            return ResolvedAuth(RUNTIME_KEY_SOURCE, api_key=runtime_key)
        found = self.stored(provider)
        if found is not None:
            store, entry = found
            if entry["type"] == "oauth":
                return self._oauth(provider, store, entry, validity_ms)
            return self._stored_key(provider, store, entry)
        if configured_key is not None:
            key = config_values.resolve(configured_key, environ=self.environ)
            if key is None and provider not in builtin_providers():
                return None  # a configured endpoint (a local server) may need no key
            if key is None:
                reason = config_values.unresolved_reason(configured_key, environ=self.environ)
                raise CredentialError(
                    f"the API key configured for {provider} has no value: {reason}"
                )
            return ResolvedAuth("configured API key", api_key=key)
        return self._ambient(provider)

    def _stored_key(
        self, provider: str, store: FileCredentialStore, entry: Credential
    ) -> ResolvedAuth:
        scoped: dict[str, str] = dict(entry.get("env") or {})
        raw = entry.get("key")
        if raw is None:
            # Only provider settings (a Bedrock profile, a Vertex project): the transport's
            # own credentials, read with these variables first.
            source = self._ambient_source(provider, scoped)
            if source is None:
                raise CredentialError(
                    f"the {provider} entry in {store.path} has no key and the environment "
                    "has no credentials for it"
                )
            return self._ambient(provider, scoped) or ResolvedAuth(source, env=scoped)
        key = config_values.resolve(raw, scoped, self.environ)
        if key is None:
            reason = config_values.unresolved_reason(raw, scoped, self.environ)
            raise CredentialError(f"the {provider} key in {store.path} has no value: {reason}")
        source = f"API key in {store.path}"
        if provider.startswith("cloudflare-"):
            return self._cloudflare(provider, key, scoped, source)
        return ResolvedAuth(source, api_key=key, env=scoped)

    def _cloudflare(
        self, provider: str, key: str, scoped: Mapping[str, str] | None, source: str
    ) -> ResolvedAuth:
        """Pi's Cloudflare credentials: the account (and gateway) go with the call, which puts
        them into the endpoint; the AI Gateway takes the key as ``cf-aig-authorization``."""
        env = {
            name: value
            for name in ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID")
            if (value := self._variable(name, scoped))
        }
        if provider != "cloudflare-ai-gateway":
            return ResolvedAuth(source, api_key=key, env=env)
        headers = {
            "cf-aig-authorization": f"Bearer {key}",
            "Authorization": None,
            "x-api-key": None,
        }
        return ResolvedAuth(source, headers=headers, env=env)

    def _oauth(
        self, provider: str, store: FileCredentialStore, entry: Credential, validity_ms: int
    ) -> ResolvedAuth:
        refresh = self._refreshers.get(provider)
        if refresh is None:
            from ctxmodes.providers.oauth import expires_soon

            if expires_soon(entry, self._now_ms(), validity_ms):
                raise CredentialError(
                    f"the {provider} login in {store.path} has expired; log in again with Pi"
                )
            return ResolvedAuth(f"OAuth in {store.path}", api_key=str(entry["access"]))
        token = current_access_token(
            store, provider, refresh, now_ms=self._now_ms, validity_ms=validity_ms
        )
        if token is None:
            raise CredentialError(f"logged out of {provider} meanwhile ({store.path})")
        return ResolvedAuth(f"OAuth in {store.path}", api_key=token)

    def _ambient(
        self, provider: str, scoped: Mapping[str, str] | None = None
    ) -> ResolvedAuth | None:
        scope = dict(scoped or {})
        if provider.startswith("cloudflare-"):
            # A key without its account (or gateway) still resolves: the request then finds
            # its endpoint incomplete and says which value is missing.
            key = self._variable("CLOUDFLARE_API_KEY", scoped)
            if key is None:
                return None
            return self._cloudflare(provider, key, scoped, "CLOUDFLARE_API_KEY")
        names = env_keys(provider)
        if provider == "anthropic" and self._variable(ANTHROPIC_AUTH_TOKEN, scoped):
            token = self._variable(ANTHROPIC_AUTH_TOKEN, scoped)
            return ResolvedAuth(
                ANTHROPIC_AUTH_TOKEN, headers={"Authorization": f"Bearer {token}"}, env=scope
            )
        for name in names:
            value = self._variable(name, scoped)
            if value:
                return ResolvedAuth(name, api_key=value, env=scope)
        if provider in ("amazon-bedrock", "google-vertex"):
            source = self._ambient_source(provider, scoped)
            return ResolvedAuth(source, api_key=AUTHENTICATED, env=scope) if source else None
        if provider == "openai-codex":
            token = codex_cli_token(self.environ)
            return ResolvedAuth("Codex CLI login", api_key=token) if token else None
        return None


def credential_sources(
    models: Iterable[ModelSpec], environ: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """For each model (by ``provider/id``), where its credentials would come from, or
    ``None``; each provider is looked at once, and nothing is run or refreshed.

    :raises CredentialError: a credential file is corrupt.
    """
    resolver = AuthResolver(environ)
    seen: dict[tuple[str, str | None], str | None] = {}
    sources = {}
    for model in models:
        key = (model.provider, model.api_key)
        if key not in seen:
            seen[key] = resolver.status(model.provider, model.api_key)
        sources[model.ref] = seen[key]
    return sources


def models_with_credentials(models: Iterable[ModelSpec]) -> list[ModelSpec]:
    """The models Pi counts as available, in the order given: those whose provider has
    credentials (nothing is run or refreshed to find out).

    :raises CredentialError: a credential file is corrupt.
    """
    models = list(models)
    sources = credential_sources(models)
    return [model for model in models if sources[model.ref]]


def missing_credentials_hint(provider: str, configured_key: str | None = None) -> str:
    """What to do about a provider without credentials, in one clause."""
    info = builtin_providers().get(provider)
    login = f"run `ctxmodes login {provider}`"
    if configured_key is not None:
        names = config_values.variable_names(configured_key)
        if names:
            return f"set {', '.join(names)} (named by its configured API key) or {login}"
        return login
    if info is None:
        return f"add an apiKey for {provider} to {pi_agent_dir() / 'models.json'} or {login}"
    if provider == "amazon-bedrock":
        return f"set AWS_PROFILE, AWS access keys or AWS_BEARER_TOKEN_BEDROCK, or {login}"
    if provider == "google-vertex":
        return (
            "set GOOGLE_CLOUD_API_KEY, or run `gcloud auth application-default login` and set "
            f"GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, or {login}"
        )
    if provider == "openai-codex":
        return f"{login} (or log in with Pi or the Codex CLI)"
    names = environment_names(provider)
    if provider.startswith("cloudflare-"):
        return f"set {' and '.join(names)}, or {login}"
    return f"set {' or '.join(names)}, or {login}" if names else login


def environment_names(provider: str) -> list[str]:
    """The variables that give ``provider`` its credentials, as ``ctxmodes login`` lists
    them (Anthropic's ``ANTHROPIC_AUTH_TOKEN`` is left out: it is Claude Code's, and Pi
    reads it only as a last resort)."""
    if provider == "amazon-bedrock":
        return ["AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK"]
    if provider == "google-vertex":
        return ["GOOGLE_CLOUD_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"]
    if provider.startswith("cloudflare-"):
        return ["CLOUDFLARE_API_KEY", "CLOUDFLARE_ACCOUNT_ID"] + (
            ["CLOUDFLARE_GATEWAY_ID"] if provider == "cloudflare-ai-gateway" else []
        )
    info = builtin_providers().get(provider)
    keys = info.env_keys if info is not None else []
    return [n for n in keys if n != ANTHROPIC_AUTH_TOKEN] or keys
