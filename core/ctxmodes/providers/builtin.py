"""The default plugin that registers the built-in models and schemes.

Registered in every plugin manager (``DEFAULT_PLUGINS``) and blockable like any plugin:
the scripted scheme, pi-ai 0.85's OpenAI and Codex tables, the custom providers of Pi's
``models.json`` (so a Pi user's setup works unchanged) and the ``[providers.<name>]``
tables of ctxmodes' configuration (:class:`ConfiguredProviders`, added by the configured
plugin manager), in that order, so later ones override earlier ones.
``OPENAI_BASE_URL`` moves the ``openai`` models, as the OpenAI SDK honours it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ctxmodes import hookimpl
from ctxmodes.providers.catalog import ModelSpec, builtin_models
from ctxmodes.providers.credentials import (
    CredentialError,
    missing_key_hint,
    pi_agent_dir,
    resolve_api_key,
)

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


def pi_custom_models(environ: Mapping[str, str] | None = None) -> Iterator[ModelSpec]:
    """The models of Pi's ``models.json`` custom providers (Pi's defaults for missing keys).

    :raises CredentialError: the file exists but is not valid JSON.
    """
    env = os.environ if environ is None else environ
    path = pi_agent_dir(env) / "models.json"
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return
    except (OSError, json.JSONDecodeError) as error:
        raise CredentialError(f"cannot use {path}: {error}") from None
    for provider, config in (data.get("providers") or {}).items():
        if not isinstance(config, dict):
            continue
        for entry in config.get("models") or []:
            if not isinstance(entry, dict) or "id" not in entry:
                continue
            merged: dict[str, Any] = {
                "name": entry["id"],
                "api": config.get("api", "openai-completions"),
                "provider": provider,
                "baseUrl": config.get("baseUrl", ""),
                **({"headers": config["headers"]} if config.get("headers") else {}),
                **({"compat": config["compat"]} if config.get("compat") else {}),
                **({"apiKey": config["apiKey"]} if config.get("apiKey") else {}),
                **entry,
            }
            yield ModelSpec.model_validate(merged)


def configured_models(providers: Mapping[str, Any]) -> Iterator[ModelSpec]:
    """The models of ``[providers.<name>]`` tables (:class:`ctxmodes.config.ProviderSettings`)."""
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
                    "contextWindow": model.context_window,
                    "maxTokens": model.max_tokens,
                    "cost": model.cost.model_dump(by_alias=True),
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


def default_model_provider(model: ModelSpec, *, seam: Any = None) -> Provider:
    """A provider for a catalog model: the built-in transport of its ``api``, with its key
    from the configuration, the environment or Pi's ``auth.json``."""
    from ctxmodes.providers.http import HttpSeam
    from ctxmodes.providers.http_model import CodexModelProvider, HttpModelProvider

    seam = seam if seam is not None else HttpSeam()
    configured = model.api_key
    env_var = configured[1:].strip("{}") if configured and configured.startswith("$") else None

    def api_key() -> str | None:
        if configured and env_var is None:
            return configured
        return resolve_api_key(model.provider, env_var=env_var)

    hint = missing_key_hint(model.provider, env_var)
    if model.provider == "openai-codex" and not configured:
        from ctxmodes.providers.codex_oauth import CodexTokenSource
        from ctxmodes.providers.jsvalues import pi_user_agent

        tokens = CodexTokenSource(
            lambda: seam.client(None), user_agent=seam.user_agent or pi_user_agent()
        )
        return CodexModelProvider(model, tokens, missing_key_hint=hint, seam=seam)
    if model.api == "openai-codex-responses":
        return CodexModelProvider(model, api_key, missing_key_hint=hint, seam=seam)
    # An endpoint the user configured (a local server such as Ollama or llama.cpp) works
    # without a key; pi-ai's own providers always need one.
    keyless = model.provider not in {known.provider for known in builtin_models()}
    return HttpModelProvider(model, api_key, missing_key_hint=hint, seam=seam, keyless=keyless)


class BuiltinModels:
    """Registers the scripted scheme, pi-ai's tables and the models of Pi's ``models.json``."""

    @hookimpl
    def ctx_register_models(self, register: Callable[[ModelRegistration], None]) -> None:
        for registration in builtin_registrations():
            register(registration)
        for model in pi_custom_models():
            register(model)


class ConfiguredProviders:
    """Registers the ``[providers.<name>]`` tables; called last, so they override."""

    def __init__(self, providers: Mapping[str, Any]) -> None:
        self._providers = dict(providers)

    @hookimpl(trylast=True)
    def ctx_register_models(self, register: Callable[[ModelRegistration], None]) -> None:
        for model in configured_models(self._providers):
            register(model)
