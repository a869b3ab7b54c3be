"""The Azure OpenAI Responses request: where it goes and what it carries, as pi-ai 0.85
builds it through the OpenAI SDK's ``AzureOpenAI`` client.

The endpoint comes from ``AZURE_OPENAI_BASE_URL`` (an Azure host's bare, ``/openai`` or
``/openai/v1/responses`` path becomes ``/openai/v1``), else
``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1``, else the model's
``baseUrl``; ``api-version`` from ``AZURE_OPENAI_API_VERSION`` (``v1``); the ``model`` sent
is the deployment (``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``: ``id=deployment,…``). Each variable
is read from the credential's own ``env`` first, then the process environment.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Callable, Mapping

from ctxmodes.providers.apis.openai.responses_request import (
    add_reasoning,
    clamp_cache_key,
    convert_messages,
    convert_tools,
)
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import JsonObject, PiContext, StreamOptions, WireError

DEFAULT_API_VERSION = "v1"
#: Providers whose tool-call ids keep Responses' ``call|item`` form on this wire.
TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode", "azure-openai-responses"})
MIN_OUTPUT_TOKENS = 16
_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")


def setting(name: str, env: Mapping[str, str] | None) -> str | None:
    """pi-ai's ``getProviderEnvValue``: the scoped value, else the process's (empty = unset)."""
    return (env or {}).get(name) or os.environ.get(name) or None


def deployment_name(model: ModelSpec, env: Mapping[str, str] | None) -> str:
    mapping: dict[str, str] = {}
    for entry in (setting("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", env) or "").split(","):
        model_id, _, deployment = entry.strip().partition("=")
        if model_id and deployment:
            mapping[model_id.strip()] = deployment.strip()
    return mapping.get(model.id) or model.id


def _normalize_base_url(base_url: str) -> str:
    trimmed = base_url.strip().rstrip("/")
    parts = urllib.parse.urlsplit(trimmed)
    if not parts.scheme or not parts.netloc:
        raise WireError(f"Invalid Azure OpenAI base URL: {base_url}")
    path = parts.path.rstrip("/")
    host = (parts.hostname or "").lower()
    if host.endswith(_AZURE_HOSTS) and path in ("", "/openai", "/openai/v1/responses"):
        parts = parts._replace(path="/openai/v1", query="")
    elif not parts.path:
        parts = parts._replace(path="/")
    return urllib.parse.urlunsplit(parts).rstrip("/")


def responses_url(model: ModelSpec, env: Mapping[str, str] | None) -> str:
    """``<base>/responses?api-version=<version>``.

    :raises WireError: no endpoint at all, or one that is not a URL (Pi's messages).
    """
    version = setting("AZURE_OPENAI_API_VERSION", env) or DEFAULT_API_VERSION
    base = (setting("AZURE_OPENAI_BASE_URL", env) or "").strip() or None
    resource = setting("AZURE_OPENAI_RESOURCE_NAME", env)
    if base is None and resource:
        base = f"https://{resource}.openai.azure.com/openai/v1"
    if base is None and model.base_url:
        base = model.base_url
    if base is None:
        raise WireError(
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or "
            "AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or "
            "model.baseUrl."
        )
    query = urllib.parse.urlencode({"api-version": version})
    return f"{_normalize_base_url(base)}/responses?{query}"


def build_headers(
    model: ModelSpec, options: StreamOptions, api_key: str, user_agent: str
) -> dict[str, str]:
    """The SDK's headers: Pi's user agent, the model's and the caller's (``None`` removes
    one), the key as ``api-key`` (Azure's scheme, no bearer), JSON in and out."""
    merged: dict[str, str | None] = {"User-Agent": user_agent, **(model.headers or {})}
    merged.update(options.headers)
    headers = {name: value for name, value in merged.items() if value is not None}
    headers["api-key"] = api_key
    headers.setdefault("accept", "application/json")
    headers["content-type"] = "application/json"
    return headers


def build_body(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    effort: str | None,
    now_ms: Callable[[], int],
) -> JsonObject:
    """pi-ai's ``buildParams`` for Azure, keys in Pi's order."""
    body: JsonObject = {
        "model": deployment_name(model, options.env),
        "input": convert_messages(
            model,
            context.system_prompt,
            context.messages,
            now_ms,
            id_providers=TOOL_CALL_PROVIDERS,
        ),
        "stream": True,
    }
    key = clamp_cache_key(options.session_id)
    if key is not None:
        body["prompt_cache_key"] = key
    body["store"] = False
    if options.max_tokens:
        body["max_output_tokens"] = max(options.max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = convert_tools(
            context.tools, supports_strict=model.flag("supportsStrictMode", True)
        )
    if options.tool_choice is not None:
        body["tool_choice"] = options.tool_choice
    add_reasoning(body, model, effort, options.reasoning_summary)
    if options.sampling_params:
        body.update(options.sampling_params)
    return body
