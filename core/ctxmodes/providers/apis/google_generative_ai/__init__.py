"""``google-generative-ai``: the Gemini API (``POST <base>/models/<id>:streamGenerateContent
?alt=sse``) with an API key, exactly as pi-ai 0.85 speaks it through ``@google/genai``.

Errors are not retried unless ``maxRetries`` is set, and then without the server's
``Retry-After`` (the SDK's errors carry no headers).
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxmodes.providers.apis.google import call as google_call
from ctxmodes.providers.apis.google.request import (
    BUDGETS_25_FLASH,
    BUDGETS_25_FLASH_LITE,
    BUDGETS_25_PRO,
    GoogleThinking,
    build_body,
    google_budget,
    is_gemini_3_flash,
    is_gemini_3_pro,
    is_gemma_4,
    resolve_level,
)
from ctxmodes.providers.apis.google.request import (
    capabilities as capabilities,
)
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.budget import clamp_max_tokens
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.transport.options import missing_key_message
from ctxmodes.providers.wire import JsonObject, PiContext, PiMessage, StreamOptions, WireError

API = "google-generative-ai"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


def disabled_thinking(model: ModelSpec) -> JsonObject:
    """Thinking off: Gemini 3 and Gemma 4 cannot switch it off, so the lowest level."""
    if is_gemini_3_pro(model):
        return {"thinkingLevel": "LOW"}
    if is_gemini_3_flash(model) or is_gemma_4(model):
        return {"thinkingLevel": "MINIMAL"}
    return {"thinkingBudget": 0}


def thinking_for(
    model: ModelSpec, level: str | None, custom_budgets: Mapping[str, int] | None = None
) -> GoogleThinking:
    """pi-ai's ``streamSimple`` choice: a Google level for Gemini 3 and Gemma 4, a token
    budget for the others (``-1``: the model decides)."""
    if not level:
        return GoogleThinking(enabled=False)
    resolved = resolve_level(model, model.clamp_thinking_level(level))
    if is_gemini_3_pro(model):
        return GoogleThinking(True, level="LOW" if resolved in ("minimal", "low") else "HIGH")
    if is_gemma_4(model):
        return GoogleThinking(True, level="MINIMAL" if resolved in ("minimal", "low") else "HIGH")
    if is_gemini_3_flash(model):
        return GoogleThinking(True, level=resolved.upper())
    budgets: dict[str, int] | None = None
    if "2.5-pro" in model.id:
        budgets = BUDGETS_25_PRO
    elif "2.5-flash-lite" in model.id:
        budgets = BUDGETS_25_FLASH_LITE
    elif "2.5-flash" in model.id:
        budgets = BUDGETS_25_FLASH
    return GoogleThinking(True, budget_tokens=google_budget(resolved, custom_budgets, budgets))


def model_path(model_id: str) -> str:
    if model_id.startswith(("models/", "tunedModels/")):
        return model_id
    return f"models/{model_id}"


def stream(
    model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
) -> PiMessage:
    """One call, pi-ai's ``streamSimple``: returns the final message (also on failure).

    :raises WireError: no API key (pi-ai throws before streaming; nothing to store).
    """
    api_key = options.api_key
    if not api_key:
        raise WireError(missing_key_message(model.provider))
    options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    thinking = thinking_for(model, options.reasoning, options.thinking_budgets)

    def body(output: PiMessage) -> None:
        base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
        url = f"{base}/{model_path(model.id)}:streamGenerateContent?alt=sse"
        headers = google_call.sdk_headers(
            model, options, call.user_agent, {"x-goog-api-key": api_key}
        )
        request = build_body(
            model, context, options, thinking, disabled_thinking(model), call.now_ms
        )
        google_call.run(model, url, headers, request, options, call, output, label="Google")

    return call.run(model, API, body)
