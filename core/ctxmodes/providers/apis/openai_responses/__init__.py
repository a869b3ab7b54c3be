"""``openai-responses``: the OpenAI Responses API (``POST <base>/responses``), streamed.

Requests, headers and messages are pi-ai 0.85's (see ``pi-providers.md`` §3). Pi sends them
through the OpenAI SDK; ctxmodes speaks the same wire over httpx and its own SSE reader,
without the SDK's ``x-stainless-*`` headers.
"""

from __future__ import annotations

import contextlib

from ctxmodes.providers.apis.openai import sdk
from ctxmodes.providers.apis.openai.responses_stream import ResponsesStream
from ctxmodes.providers.apis.openai_responses.request import build_body, build_headers
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.call import CallContext, stream_simple
from ctxmodes.providers.transport.options import cache_retention
from ctxmodes.providers.wire import ABORTED, PiContext, PiMessage, StreamOptions, WireError

API = "openai-responses"


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """Namespaced tools; a developer role unless the model's compat says otherwise."""
    return ModelCapabilities(
        developer_role=model.flag("supportsDeveloperRole", True) is not False,
        namespaced_tools=True,
        images=model.images,
        reasoning=model.reasoning,
    )


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    api_key: str,
    effort: str | None,
    output: PiMessage,
) -> None:
    retention = cache_retention(options)
    session = options.session_id if retention != "none" else None
    headers = build_headers(model, options, api_key, call.user_agent, session)
    body = build_body(model, context, options, effort, call.now_ms)
    url = model.base_url.rstrip("/") + "/responses"
    response = sdk.post_stream(call, url, headers, body, options, error_prefix="OpenAI API error")
    reader = ResponsesStream(model, output, call.emit, service_tier=options.service_tier)
    with contextlib.closing(response):
        for event in call.guard(sdk.iter_sdk_events(response.iter_text()), call.signal):
            reader.feed(event)
    if not reader.terminal:
        raise WireError("OpenAI Responses stream ended before a terminal response event")
    if call.signal.aborted:
        raise WireError(ABORTED)
    if output["stopReason"] == "pending":
        raise WireError("OpenAI Responses stream ended without a stop reason")
    if output["stopReason"] in ("aborted", "error"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")


#: One call, pi-ai's ``streamSimple``: returns the final message (also on failure).
stream = stream_simple(API, _call)
