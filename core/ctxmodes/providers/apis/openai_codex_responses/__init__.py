"""``openai-codex-responses``: the ChatGPT backend that serves Codex (``…/codex/responses``).

Same Responses codec as the OpenAI endpoint; the endpoint differs (pi-providers.md §4): the
key is a ChatGPT OAuth access token whose claims carry the account id, identity headers are
``originator: pi`` and Pi's user agent, the body always has ``store: false``,
``instructions``, ``text.verbosity``, encrypted reasoning in ``include`` and the session as
``prompt_cache_key``, and errors and retries are Codex's own. Pi's Codex SSE parser splits
frames on ``\\n\\n`` only (see :mod:`.stream`).
"""

from __future__ import annotations

import contextlib

from ctxmodes.providers.apis.openai.responses_request import clamp_cache_key
from ctxmodes.providers.apis.openai.responses_stream import ResponsesStream
from ctxmodes.providers.apis.openai_codex_responses.request import (
    account_id,
    build_body,
    build_headers,
    codex_url,
)
from ctxmodes.providers.apis.openai_codex_responses.retry import open_stream
from ctxmodes.providers.apis.openai_codex_responses.stream import codex_events
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import finish_answer
from ctxmodes.providers.transport.budget import clamp_max_tokens
from ctxmodes.providers.transport.call import CallContext, reasoning_effort
from ctxmodes.providers.transport.options import missing_key_message
from ctxmodes.providers.wire import ABORTED, PiContext, PiMessage, StreamOptions, WireError

API = "openai-codex-responses"


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """A developer role; no plaintext namespaces: Codex reserves its namespaces for
    encrypted arguments, which only the Remote contract provides."""
    return ModelCapabilities(
        developer_role=True,
        namespaced_tools=False,
        encrypted_tool_arguments=True,
        images=model.images,
        reasoning=model.reasoning,
    )


def stream(
    model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
) -> PiMessage:
    """One call, pi-ai's Codex ``streamSimple``: returns the final message (also on failure).

    :raises WireError: no token at all (pi-ai throws before streaming).
    """
    if not options.api_key:
        raise WireError(missing_key_message(model.provider))
    options.max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    effort = reasoning_effort(model, options.reasoning)
    return call.run(model, API, lambda output: _call(model, context, options, call, effort, output))


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    effort: str | None,
    output: PiMessage,
) -> None:
    token = options.api_key or ""
    account = account_id(token)
    session = clamp_cache_key(options.session_id if options.cache_retention != "none" else None)
    body = build_body(model, context, options, effort, session, call.now_ms)
    headers = build_headers(model, options, token, account, call.user_agent, session)
    client = call.client(options.timeout_ms)
    request = client.build_request(
        "POST", codex_url(model.base_url), headers=headers, content=call.encode(body)
    )
    response = open_stream(client, request, options, call)
    call.started()
    reader = ResponsesStream(
        model,
        output,
        call.emit,
        service_tier=options.service_tier,
        resolve_tier=_resolve_tier,
    )
    with contextlib.closing(response):
        texts = response.iter_text()
        for event in call.guard(codex_events(texts, output), call.signal):
            reader.feed(event)
        if reader.terminal and not call.signal.aborted:
            # Pi stops at the terminal event too; what follows is read, not parsed, so
            # that the connection can serve the next call.
            finish_answer(response, texts)
    if call.signal.aborted:
        raise WireError(ABORTED)
    if not reader.terminal:
        raise WireError("OpenAI Responses stream ended before a terminal response event")
    if output["stopReason"] == "pending":
        raise WireError("Codex stream ended without a stop reason")
    if output["stopReason"] in ("error", "aborted"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")


def _resolve_tier(answered: str | None, requested: str | None) -> str | None:
    if answered == "default" and requested in ("flex", "priority"):
        return requested
    return answered or requested
