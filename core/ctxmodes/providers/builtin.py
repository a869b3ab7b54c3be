"""The default plugin that registers the built-in models and schemes.

Registered in every plugin manager (``DEFAULT_PLUGINS``) and blockable like any plugin:
the scripted scheme, pi-ai 0.85's whole catalog (every provider and model, spoken by the
wire formats of :mod:`ctxmodes.providers.apis`), the custom providers of Pi's
``models.json`` (so a Pi user's setup works unchanged) and the ``[providers.<name>]``
tables of ctxmodes' configuration (:class:`ConfiguredProviders`, added by the configured
plugin manager), in that order, so later ones override earlier ones.
``OPENAI_BASE_URL`` moves the ``openai`` models, as the OpenAI SDK honours it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ctxmodes import hookimpl
from ctxmodes.providers.auth import AuthResolver, ResolvedAuth, missing_credentials_hint
from ctxmodes.providers.catalog import ModelSpec, builtin_models, may_be_keyless
from ctxmodes.providers.config_values import is_configured
from ctxmodes.providers.credentials import CredentialError
from ctxmodes.providers.models_json import catalog_with_models_json

__all__ = [
    "BuiltinModels",
    "ConfiguredProviders",
    "builtin_registrations",
    "default_model_provider",
]
from ctxmodes.providers.registry import SCRIPTED, ModelRegistration

if TYPE_CHECKING:
    from ctxmodes.providers.base import Provider


def _openai_base(model: ModelSpec, environ: Mapping[str, str]) -> ModelSpec:
    base = environ.get("OPENAI_BASE_URL")
    if model.provider == "openai" and base:
        return model.model_copy(update={"base_url": base})
    return model


def configured_models(providers: Mapping[str, Any]) -> Iterator[ModelSpec]:
    """The models of ``[providers.<name>]`` tables (:class:`ctxmodes.config.ProviderSettings`),
    their keys in the order Pi gives a model of ``models.json``."""
    for name, settings in providers.items():
        for model in settings.models:
            yield ModelSpec.model_validate(
                {
                    "id": model.id,
                    "name": model.name or model.id,
                    "api": settings.api,
                    "provider": name,
                    "baseUrl": settings.base_url,
                    "reasoning": model.reasoning,
                    "input": model.input,
                    "cost": model.cost.model_dump(by_alias=True),
                    "contextWindow": model.context_window,
                    "maxTokens": model.max_tokens,
                    "headers": settings.headers or None,
                    "compat": {**settings.compat, **model.compat} or None,
                    "apiKey": settings.api_key
                    or (f"${settings.api_key_env}" if settings.api_key_env else None),
                }
            )


def builtin_registrations(
    environ: Mapping[str, str] | None = None,
) -> list[ModelRegistration]:
    env = os.environ if environ is None else environ
    registrations: list[ModelRegistration] = [SCRIPTED]
    registrations.extend(_openai_base(model, env) for model in builtin_models())
    return registrations


def auth_resolver(seam: Any, environ: Mapping[str, str] | None = None) -> AuthResolver:
    """Credentials in Pi's order, with ChatGPT's and Anthropic's OAuth tokens refreshed
    through ``seam`` when due."""
    from ctxmodes.providers import anthropic_oauth, codex_oauth
    from ctxmodes.providers.jsvalues import pi_user_agent
    from ctxmodes.providers.wire import wall_clock_ms

    env = os.environ if environ is None else environ

    def client() -> Any:
        return seam.client(None)

    refreshers = {
        codex_oauth.PROVIDER: codex_oauth.refresher(
            client,
            base=codex_oauth.auth_base(env),
            now_ms=wall_clock_ms,
            user_agent=seam.user_agent or pi_user_agent(),
        ),
        anthropic_oauth.PROVIDER: anthropic_oauth.refresher(
            client, base=anthropic_oauth.token_base(env), now_ms=wall_clock_ms
        ),
    }
    return AuthResolver(env, refreshers=refreshers)


def default_model_provider(model: ModelSpec, *, seam: Any = None) -> Provider:
    """A provider for a catalog model: the built-in transport of its ``api``, with its
    credentials resolved for each request as Pi resolves them (:mod:`.auth`)."""
    from ctxmodes.providers.http import HttpSeam
    from ctxmodes.providers.http_model import CodexModelProvider, HttpModelProvider

    seam = seam if seam is not None else HttpSeam()
    resolver = auth_resolver(seam)
    keyless = may_be_keyless(model)

    def credentials() -> ResolvedAuth | None:
        try:
            model.request_headers()  # a configured header without a value fails the request
        except ValueError as error:
            raise CredentialError(str(error)) from None
        configured = model.api_key
        if keyless and configured and not is_configured(configured, environ=resolver.environ):
            configured = None  # a local server's key variable that is not set: no key
        return resolver.resolve(model.provider, configured)

    hint = missing_credentials_hint(model.provider, model.api_key)
    if model.api == "openai-codex-responses":
        return CodexModelProvider(model, credentials, missing_key_hint=hint, seam=seam)
    return HttpModelProvider(model, credentials, missing_key_hint=hint, seam=seam, keyless=keyless)


class BuiltinModels:
    """Registers the scripted scheme, pi-ai's tables and the models of Pi's ``models.json``."""

    @hookimpl
    def ctx_register_models(self, register: Callable[[ModelRegistration], None]) -> None:
        registrations = builtin_registrations()
        builtin = [r for r in registrations if isinstance(r, ModelSpec)]
        for registration in registrations:
            if not isinstance(registration, ModelSpec):
                register(registration)
        for model in catalog_with_models_json(builtin):
            register(model)


class ConfiguredProviders:
    """Registers the ``[providers.<name>]`` tables; called last, so they override."""

    def __init__(self, providers: Mapping[str, Any]) -> None:
        self._providers = dict(providers)

    @hookimpl(trylast=True)
    def ctx_register_models(self, register: Callable[[ModelRegistration], None]) -> None:
        for model in configured_models(self._providers):
            register(model)
