"""``azure-openai-responses``: the OpenAI Responses API on Azure
(``POST <endpoint>/openai/v1/responses?api-version=…``), streamed.

The conversion of messages and tools and the reading of the stream are OpenAI Responses'
(:mod:`ctxmodes.providers.apis.openai`); what differs is where the request goes, the
``api-key`` header, the deployment name as ``model`` and the error wording
(:mod:`.request`). Retries are pi-ai's ``retryProviderRequest``, as on OpenAI.
"""

from __future__ import annotations

import contextlib

from ctxmodes.providers.apis.azure_openai_responses.request import (
    build_body,
    build_headers,
    responses_url,
)
from ctxmodes.providers.apis.openai import sdk
from ctxmodes.providers.apis.openai.responses_stream import ResponsesStream
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.call import CallContext, stream_simple
from ctxmodes.providers.wire import ABORTED, PiContext, PiMessage, StreamOptions, WireError

API = "azure-openai-responses"
ERROR_PREFIX = "Azure OpenAI API error"


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """A developer role unless the model's compat says otherwise; plain function tools
    (namespaces are an OpenAI endpoint's feature)."""
    return ModelCapabilities(
        developer_role=model.flag("supportsDeveloperRole", True) is not False,
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
    url = responses_url(model, options.env)
    headers = build_headers(model, options, api_key, call.user_agent)
    body = build_body(model, context, options, effort, call.now_ms)
    response = sdk.post_stream(call, url, headers, body, options, error_prefix=ERROR_PREFIX)
    reader = ResponsesStream(model, output, call.emit)
    with contextlib.closing(response):
        for event in call.guard(sdk.iter_sdk_events(response.iter_text()), call.signal):
            reader.feed(event)
    if call.signal.aborted:
        raise WireError(ABORTED)
    if output["stopReason"] == "pending":
        raise WireError("Azure OpenAI Responses stream ended without a stop reason")
    if output["stopReason"] in ("aborted", "error"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")


#: One call, pi-ai's ``streamSimple``: returns the final message (also on failure).
stream = stream_simple(API, _call)
