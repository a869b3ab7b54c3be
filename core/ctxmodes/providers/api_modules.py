"""Which package speaks each wire format, by pi-ai's ``api`` name: a module of its own, so
that checking a name (``models.json``) imports no transport and no HTTP client."""

from __future__ import annotations

#: ``api`` → the package that speaks it.
API_MODULES: dict[str, str] = {
    "openai-responses": "ctxmodes.providers.apis.openai_responses",
    "openai-codex-responses": "ctxmodes.providers.apis.openai_codex_responses",
    "openai-completions": "ctxmodes.providers.apis.openai_completions",
    "anthropic-messages": "ctxmodes.providers.apis.anthropic_messages",
    "google-generative-ai": "ctxmodes.providers.apis.google_generative_ai",
    "google-vertex": "ctxmodes.providers.apis.google_vertex",
    "mistral-conversations": "ctxmodes.providers.apis.mistral_conversations",
    "azure-openai-responses": "ctxmodes.providers.apis.azure_openai_responses",
    "bedrock-converse-stream": "ctxmodes.providers.apis.bedrock_converse_stream",
}
