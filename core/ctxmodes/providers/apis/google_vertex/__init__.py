"""``google-vertex``: Gemini on Vertex AI, exactly as pi-ai 0.85 speaks it through
``@google/genai`` in Vertex mode.

With an API key the request goes to Vertex express mode
(``https://aiplatform.googleapis.com/v1/publishers/google/models/<id>:streamGenerateContent``);
with a custom base URL (a proxy) to that URL's path; without a key Google's Application
Default Credentials (:mod:`.credentials`) authorise a request to the project's location.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from ctxmodes.providers.apis.google import call as google_call
from ctxmodes.providers.apis.google.request import (
    BUDGETS_25_FLASH,
    BUDGETS_25_PRO,
    GoogleThinking,
    build_body,
    google_budget,
    is_gemini_3_flash,
    is_gemini_3_pro,
    resolve_level,
)
from ctxmodes.providers.apis.google.request import (
    capabilities as capabilities,
)
from ctxmodes.providers.apis.google_vertex.credentials import access_headers
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.budget import clamp_max_tokens
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.options import env_value
from ctxmodes.providers.wire import JsonObject, PiContext, PiMessage, StreamOptions, WireError

API = "google-vertex"
API_VERSION = "v1"
#: A stored credential that stands for "use Application Default Credentials".
ADC_MARKER = "gcp-vertex-credentials"
GLOBAL_HOST = "https://aiplatform.googleapis.com"
MULTI_REGIONAL_LOCATIONS = frozenset({"us", "eu"})
NO_PROJECT = (
    "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project "
    "in options."
)
NO_LOCATION = (
    "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options."
)

_PLACEHOLDER_KEY = re.compile(r"^<[^>]+>$")
_VERSION_PART = re.compile(r"^v\d+(?:beta\d*)?$")
_VERSION_IN_TEXT = re.compile(r"(?:^|/)v\d+(?:beta\d*)?(?:/|$)")


def disabled_thinking(model: ModelSpec) -> JsonObject:
    if is_gemini_3_pro(model):
        return {"thinkingLevel": "LOW"}
    if is_gemini_3_flash(model):
        return {"thinkingLevel": "MINIMAL"}
    return {"thinkingBudget": 0}


def thinking_for(
    model: ModelSpec, level: str | None, custom_budgets: Mapping[str, int] | None = None
) -> GoogleThinking:
    if not level:
        return GoogleThinking(enabled=False)
    resolved = resolve_level(model, model.clamp_thinking_level(level))
    if is_gemini_3_pro(model):
        return GoogleThinking(True, level="LOW" if resolved in ("minimal", "low") else "HIGH")
    if is_gemini_3_flash(model):
        return GoogleThinking(True, level=resolved.upper())
    budgets: dict[str, int] | None = None
    if "2.5-pro" in model.id:
        budgets = BUDGETS_25_PRO
    elif "2.5-flash" in model.id:
        budgets = BUDGETS_25_FLASH
    return GoogleThinking(True, budget_tokens=google_budget(resolved, custom_budgets, budgets))


def api_key_of(options: StreamOptions) -> str | None:
    """The key, unless it is absent, the ADC marker or a ``<placeholder>``."""
    key = (options.api_key or "").strip()
    if not key or key == ADC_MARKER or _PLACEHOLDER_KEY.match(key):
        return None
    return key


def custom_base_url(base_url: str) -> str | None:
    trimmed = base_url.strip()
    return None if not trimmed or "{location}" in trimmed else trimmed


def _has_version(base_url: str) -> bool:
    parts = urlsplit(base_url)
    if parts.scheme and parts.netloc:
        return any(_VERSION_PART.match(part) for part in parts.path.split("/"))
    return bool(_VERSION_IN_TEXT.search(base_url))


def model_path(model_id: str) -> str:
    if model_id.startswith(("publishers/", "projects/", "models/")):
        return model_id
    if "/" in model_id:
        publisher, name = model_id.split("/", 2)[:2]
        return f"publishers/{publisher}/models/{name}"
    return f"publishers/google/models/{model_id}"


def request_url(model: ModelSpec, project_location: tuple[str, str] | None) -> str:
    """``@google/genai``'s URL: a custom base URL as it is (its own version, or ``v1``),
    else express mode's global host, else the project's regional endpoint."""
    custom = custom_base_url(model.base_url)
    parts: list[str]
    if custom is not None:
        parts = [custom.rstrip("/")]
        if not _has_version(custom):
            parts.append(API_VERSION)
    elif project_location is None:
        parts = [GLOBAL_HOST, API_VERSION]
    else:
        project, location = project_location
        if location == "global":
            host = GLOBAL_HOST
        elif location in MULTI_REGIONAL_LOCATIONS:
            host = f"https://aiplatform.{location}.rep.googleapis.com"
        else:
            host = f"https://{location}-aiplatform.googleapis.com"
        parts = [host, API_VERSION, f"projects/{project}/locations/{location}"]
    parts.append(f"{model_path(model.id)}:streamGenerateContent?alt=sse")
    return "/".join(parts)


def stream(
    model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
) -> PiMessage:
    """One call, pi-ai's Vertex ``streamSimple``: returns the final message (also on
    failure, including missing project, location or credentials)."""
    options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    thinking = thinking_for(model, options.reasoning, options.thinking_budgets)

    def body(output: PiMessage) -> None:
        key = api_key_of(options)
        if key is not None:
            url = request_url(model, None)
            auth = {"x-goog-api-key": key}
        else:
            project = env_value(options, "GOOGLE_CLOUD_PROJECT") or env_value(
                options, "GCLOUD_PROJECT"
            )
            if not project:
                raise WireError(NO_PROJECT)
            location = env_value(options, "GOOGLE_CLOUD_LOCATION")
            if not location:
                raise WireError(NO_LOCATION)
            url = request_url(model, (project, location))
            auth = access_headers(options, call)
        headers = google_call.sdk_headers(model, options, call.user_agent, auth)
        request = build_body(
            model, context, options, thinking, disabled_thinking(model), call.now_ms
        )
        google_call.run(model, url, headers, request, options, call, output, label="Google Vertex")

    return call.run(model, API, body)
