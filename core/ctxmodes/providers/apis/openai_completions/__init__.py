"""``openai-completions``: any OpenAI-compatible Chat Completions server
(``POST <base>/chat/completions``), streamed.

Requests and the reading of chunks are pi-ai 0.85's (``pi-providers.md`` §5), sent over
httpx and the SSE reader like the Responses transport; the server's quirks come from
:mod:`.compat`.
"""

from __future__ import annotations

import contextlib

from ctxmodes.providers.apis.openai import sdk
from ctxmodes.providers.apis.openai_completions.compat import Compat, resolve_compat
from ctxmodes.providers.apis.openai_completions.request import build_body
from ctxmodes.providers.apis.openai_completions.stream import CompletionsStream
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import finish_answer
from ctxmodes.providers.transport.call import CallContext, stream_simple
from ctxmodes.providers.transport.options import cache_retention
from ctxmodes.providers.wire import ABORTED, PiContext, PiMessage, StreamOptions, WireError

API = "openai-completions"
STREAM_UNFINISHED = "Stream ended without finish_reason"


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """A developer role unless the server lacks one; tools are flat."""
    return ModelCapabilities(
        developer_role=resolve_compat(model)["supportsDeveloperRole"] is not False,
        namespaced_tools=False,
        images=model.images,
        reasoning=model.reasoning,
    )


def build_headers(
    model: ModelSpec,
    options: StreamOptions,
    compat: Compat,
    api_key: str,
    user_agent: str,
    session: str | None,
) -> dict[str, str]:
    headers: dict[str, str | None] = {"User-Agent": user_agent, **(model.headers or {})}
    if session and compat["sendSessionAffinityHeaders"]:
        if compat["sessionAffinityFormat"] == "openrouter":
            headers["x-session-id"] = session
        else:
            if compat["sessionAffinityFormat"] == "openai":
                headers["session_id"] = session
            headers["x-client-request-id"] = session
            headers["x-session-affinity"] = session
    return sdk.sdk_headers(headers, options.headers, api_key)


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    api_key: str,
    effort: str | None,
    output: PiMessage,
) -> None:
    compat = resolve_compat(model)
    retention = cache_retention(options)
    session = options.session_id if retention != "none" else None
    headers = build_headers(model, options, compat, api_key, call.user_agent, session)
    body = build_body(
        model,
        context.system_prompt,
        context.messages,
        context.tools,
        compat=compat,
        retention=retention,
        session_id=options.session_id,
        max_tokens=options.max_tokens,
        temperature=options.temperature,
        tool_choice=options.tool_choice,
        effort=effort,
        thinking_budgets=options.thinking_budgets,
        sampling_params=options.sampling_params,
        now_ms=call.now_ms,
    )
    url = model.base_url.rstrip("/") + "/chat/completions"
    response = sdk.post_stream(call, url, headers, body, options, error_prefix=None)
    reader = CompletionsStream(model, output, call.emit)
    try:
        with contextlib.closing(response):
            texts = response.iter_text()
            for chunk in call.guard(sdk.iter_sdk_events(texts), call.signal):
                reader.feed(chunk)
            if not call.signal.aborted:
                # The SDK stops at ``[DONE]``; what follows is read, not parsed, so that
                # the connection can serve the next call.
                finish_answer(response, texts)
    except WireError:
        reader.fail()
        raise
    reader.finish()
    if call.signal.aborted or output["stopReason"] == "aborted":
        raise WireError(ABORTED)
    if not reader.has_finish_reason and not compat["supportsFinishReason"]:
        calls = any(block["type"] == "toolCall" for block in output["content"])
        output["stopReason"] = "toolUse" if calls else "stop"
    if output["stopReason"] == "error":
        raise WireError(output.get("errorMessage") or "Provider returned an error stop reason")
    if (compat["supportsFinishReason"] and not reader.has_finish_reason) or output[
        "stopReason"
    ] == "pending":
        raise WireError(STREAM_UNFINISHED)


#: One call, pi-ai's ``streamSimple``: returns the final message (also on failure).
stream = stream_simple(API, _call)
