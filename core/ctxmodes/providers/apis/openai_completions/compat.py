"""The quirks of OpenAI-compatible servers, as pi-ai 0.85 detects them (``getCompat``).

Chat Completions servers disagree on small things: whether a ``developer`` role exists,
which field caps the output, whether ``store`` or ``reasoning_effort`` are accepted, how
thinking is switched on. Pi detects the answers from the provider name and base URL and lets
a model's ``compat`` table override each one; this module does the same with the same flag
names, so a Pi ``models.json`` entry means the same thing here.
"""

from __future__ import annotations

from typing import Any

from ctxmodes.providers.catalog import ModelSpec

#: The flags by pi-ai's names (``supportsDeveloperRole``, ``maxTokensField`` …): values are
#: booleans, strings or small tables, as a ``models.json`` ``compat`` entry writes them.
Compat = dict[str, Any]


def detect_compat(model: ModelSpec) -> Compat:
    """The flags pi-ai infers from ``model.provider`` and ``model.base_url``."""
    provider, base = model.provider, model.base_url
    zai = provider in ("zai", "zai-coding-cn") or "api.z.ai" in base or "open.bigmodel.cn" in base
    together = provider == "together" or "api.together.ai" in base or "api.together.xyz" in base
    moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in base
    openrouter = provider == "openrouter" or "openrouter.ai" in base
    workers_ai = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in base
    ai_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in base
    nvidia = provider == "nvidia" or "integrate.api.nvidia.com" in base
    ant_ling = provider == "ant-ling" or "api.ant-ling.com" in base
    deepseek = provider == "deepseek" or "deepseek.com" in base.lower()
    grok = provider == "xai" or "api.x.ai" in base
    chutes = "chutes.ai" in base
    non_standard = (
        nvidia
        or provider == "cerebras"
        or "cerebras.ai" in base
        or grok
        or together
        or chutes
        or deepseek
        or zai
        or moonshot
        or provider == "opencode"
        or "opencode.ai" in base
        or workers_ai
        or ai_gateway
        or ant_ling
    )
    max_tokens_field = (
        chutes or deepseek or moonshot or ai_gateway or together or nvidia or ant_ling or zai
    )
    developer_model = openrouter and model.id.startswith(("anthropic/", "openai/"))
    if deepseek:
        thinking = "deepseek"
    elif zai:
        thinking = "zai"
    elif together:
        thinking = "together"
    elif ant_ling:
        thinking = "ant-ling"
    elif openrouter:
        thinking = "openrouter"
    else:
        thinking = "openai"
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": developer_model or (not non_standard and not openrouter),
        "supportsReasoningEffort": not (
            grok or zai or moonshot or together or ai_gateway or nvidia or ant_ling
        ),
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "maxTokensField": "max_tokens" if max_tokens_field else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": thinking,
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
        "supportsThinkingTokenBudget": False,
        "thinkingTokenBudgetField": None,
        "supportsStrictMode": not (moonshot or together or ai_gateway or nvidia),
        "cacheControlFormat": (
            "anthropic" if provider == "openrouter" and model.id.startswith("anthropic/") else None
        ),
        "sendSessionAffinityHeaders": False,
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "supportsLongCacheRetention": not (
            together or workers_ai or ai_gateway or nvidia or ant_ling
        ),
        "vllmPriority": None,
    }


def resolve_compat(model: ModelSpec) -> Compat:
    """Detected flags overridden by the model's own ``compat`` (``None`` values do not count)."""
    compat = detect_compat(model)
    for name, value in (model.compat or {}).items():
        if value is not None:
            compat[name] = value
    return compat
