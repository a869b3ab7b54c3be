"""Pi's ``models.json``: custom providers, and changes to the built-in ones.

``$PI_CODING_AGENT_DIR/models.json`` (default ``~/.pi/agent``) holds ``{"providers":
{<id>: …}}``. For a built-in provider it can move the endpoint (``baseUrl``), add ``compat``
flags, ``headers`` and an ``apiKey``, upsert ``models`` by id and change single models
(``modelOverrides``); any other id is a custom provider whose models need an ``api`` and a
``baseUrl``. This module composes the catalog as pi-coding-agent's ``provider-composer``
does, so a Pi user's setup works unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ctxmodes.providers import config_values
from ctxmodes.providers.api_modules import API_MODULES
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.credentials import CredentialError, pi_agent_dir

_MODEL_DEFAULTS: dict[str, Any] = {
    "reasoning": False,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 128000,
    "maxTokens": 16384,
}
#: Compat keys whose objects merge key by key (pi-coding-agent's ``mergeCompat``).
_NESTED_COMPAT = (
    "openRouterRouting",
    "vercelGatewayRouting",
    "chatTemplateKwargs",
    "chatTemplateArgs",
)


def _merge_compat(
    base: Mapping[str, Any] | None, override: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    if not override:
        return dict(base) if base else None
    merged = {**(base or {}), **override}
    for key in _NESTED_COMPAT:
        below, above = (base or {}).get(key), override.get(key)
        if isinstance(below, dict) or isinstance(above, dict):
            merged[key] = {**(below or {}), **(above or {})}
    return merged


def _override(model: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """pi-coding-agent's ``applyModelOverride``: a ``modelOverrides`` entry over a model."""
    merged = dict(model)
    for key in ("name", "reasoning", "input", "contextWindow", "maxTokens"):
        if override.get(key) is not None:
            merged[key] = override[key]
    for key in ("thinkingLevelMap", "samplingParams"):
        if override.get(key):
            merged[key] = {**(model.get(key) or {}), **override[key]}
    if override.get("cost"):
        cost = dict(model.get("cost") or {})
        cost.update({k: v for k, v in override["cost"].items() if v is not None})
        merged["cost"] = cost
    merged["compat"] = _merge_compat(model.get("compat"), override.get("compat"))
    return merged


def _custom_model(
    provider: str,
    definition: Mapping[str, Any],
    config: Mapping[str, Any],
    defaults: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """pi-coding-agent's ``modelFromJson``: a model entry of ``models.json``."""
    api = definition.get("api") or config.get("api") or (defaults or {}).get("api")
    if not api:
        raise CredentialError(
            f'models.json: provider {provider}, model {definition["id"]}: no "api" specified'
        )
    base_url = definition.get("baseUrl") or config.get("baseUrl") or (defaults or {}).get("baseUrl")
    if not base_url:
        raise CredentialError(
            f'models.json: provider {provider}: "baseUrl" is required for custom models'
        )
    # In Pi's key order (a model's JSON shows its keys as they were made); the definition's
    # other keys after them.
    model: dict[str, Any] = {
        "id": definition["id"],
        "name": definition.get("name") or definition["id"],
        "api": api,
        "provider": provider,
        "baseUrl": base_url,
        "reasoning": definition.get("reasoning", _MODEL_DEFAULTS["reasoning"]),
        "thinkingLevelMap": definition.get("thinkingLevelMap"),
    }
    for key in ("input", "cost", "contextWindow", "maxTokens"):
        model[key] = definition.get(key, _MODEL_DEFAULTS[key])
    model["samplingParams"] = definition.get("samplingParams")
    model["headers"] = None
    model["compat"] = _merge_compat(config.get("compat"), definition.get("compat"))
    return {**model, **{k: v for k, v in definition.items() if k not in model}}


def _resolved_headers(headers: Mapping[str, Any] | None) -> dict[str, str] | None:
    """Header values are configuration values too; one without a value is left out."""
    resolved = {
        name: value
        for name, raw in (headers or {}).items()
        if isinstance(raw, str) and (value := config_values.resolve(raw)) is not None
    }
    return resolved or None


def _models_json_provider(
    provider: str, base: list[dict[str, Any]], config: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One provider of ``models.json`` over its built-in models (``applyModelsJson``, then
    ``modelOverrides``): a new ``baseUrl``, merged ``compat``, custom models upserted by
    id, per-model overrides last; its ``apiKey`` and ``headers`` go with every model."""
    models = [
        {
            **model,
            "baseUrl": config.get("baseUrl") or model["baseUrl"],
            "compat": _merge_compat(model.get("compat"), config.get("compat")),
        }
        for model in base
    ]
    for definition in config.get("models") or []:
        if not isinstance(definition, dict) or not isinstance(definition.get("id"), str):
            raise CredentialError(f"models.json: provider {provider} has a model without an id")
        wanted = definition.get("api") or config.get("api")
        defaults = next(
            (m for m in models if m["id"] == definition["id"]),
            next((m for m in models if wanted and m["api"] == wanted), None)
            or next((m for m in models if m["api"] == "openai-completions"), None)
            or (models[0] if models else None),
        )
        custom = _custom_model(provider, definition, config, defaults)
        at = next((i for i, m in enumerate(models) if m["id"] == custom["id"]), None)
        if at is None:
            models.append(custom)
        else:
            models[at] = custom
    overrides = config.get("modelOverrides") or {}
    provider_headers = config.get("headers") or {}
    finished = []
    for model in models:
        found = overrides.get(model["id"])
        override: dict[str, Any] = found if isinstance(found, dict) else {}
        if override:
            model = _override(model, override)
        entry: dict[str, Any] = next(
            (d for d in config.get("models") or [] if d.get("id") == model["id"]), {}
        )
        configured = {
            **provider_headers,
            **(override.get("headers") or {}),
            **(entry.get("headers") or {}),
        }
        # Pi's own model headers are literal; configured ones are configuration values.
        resolved = {**(model.get("headers") or {}), **(_resolved_headers(configured) or {})}
        model["headers"] = resolved or None
        model["headerValues"] = configured or None
        if isinstance(config.get("apiKey"), str):
            model["apiKey"] = config["apiKey"]
        finished.append(model)
    return finished


def pi_models_json(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``providers`` of Pi's ``models.json`` (empty when there is no file).

    :raises CredentialError: the file exists but is not valid JSON.
    """
    env = os.environ if environ is None else environ
    path = pi_agent_dir(env) / "models.json"
    try:
        data = json.loads(path.read_text("utf-8").removeprefix("\ufeff"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as error:
        raise CredentialError(f"cannot use {path}: {error}") from None
    providers = data.get("providers") if isinstance(data, dict) else None
    return {k: v for k, v in (providers or {}).items() if isinstance(v, dict)}


def catalog_with_models_json(
    builtin: list[ModelSpec], environ: Mapping[str, str] | None = None
) -> list[ModelSpec]:
    """The built-in models with Pi's ``models.json`` applied: overrides of built-in
    providers (a proxy ``baseUrl``, ``compat``, ``modelOverrides``, extra models) and
    custom providers, as Pi composes them.

    :raises CredentialError: the file is not valid JSON, a custom model lacks its ``api``
        or ``baseUrl``, names a wire format no transport speaks, or has a field of the
        wrong kind (Pi finds the first only when a request is sent).
    """
    config = pi_models_json(environ)
    by_provider: dict[str, list[ModelSpec]] = {}
    for model in builtin:
        by_provider.setdefault(model.provider, []).append(model)
    models: list[ModelSpec] = []
    for provider in [*by_provider, *(name for name in config if name not in by_provider)]:
        kept = by_provider.get(provider, [])
        if provider not in config:
            models.extend(kept)  # as built in: nothing to apply
            continue
        base = [model.to_pi() for model in kept]
        models.extend(map(_checked, _models_json_provider(provider, base, config[provider])))
    return models


def _checked(model: dict[str, Any]) -> ModelSpec:
    """A model ``models.json`` made or changed, with a mistake in it named as Pi names
    its own checks (``Provider P, model M: …``), so the user knows which entry to fix."""
    where = f"models.json: provider {model['provider']}, model {model['id']}"
    if model["api"] not in API_MODULES:
        raise CredentialError(
            f'{where}: unknown "api" {json.dumps(model["api"])}; one of: {", ".join(API_MODULES)}'
        )
    for field in ("contextWindow", "maxTokens"):
        value = model.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
            raise CredentialError(f"{where}: invalid {field}")
    try:
        return _spec(model)
    except ValidationError as error:
        problem = error.errors()[0]
        field = ".".join(str(part) for part in problem["loc"])
        raise CredentialError(f"{where}: {field}: {problem['msg']}") from None


def _spec(model: Mapping[str, Any]) -> ModelSpec:
    return ModelSpec.model_validate({k: v for k, v in model.items() if v is not None})
