"""``mistral-conversations``: Mistral's own Chat Completions endpoint
(``POST <base>/v1/chat/completions``), streamed.

As pi-ai 0.85 speaks it (Pi's own ``fetch``, no Mistral SDK): a bearer key, the session as
``x-affinity`` and ``prompt_cache_key`` unless caching is off, ``prompt_mode: reasoning``
(or ``reasoning_effort`` for the models that take it) when thinking is on. The timeout is
one deadline for the whole request, stream included, and nothing is retried; an error
answer reads ``Mistral API error (<status>): <body>``.

Mistral has no developer role: ctxmodes' harness messages join the system message (see
:func:`.request.harness_text`).
"""

from __future__ import annotations

import contextlib

import httpx
import orjson

from ctxmodes.providers.apis.mistral_conversations.request import (
    build_body,
    build_headers,
    chat_url,
    tool_call_id_normalizer,
)
from ctxmodes.providers.apis.mistral_conversations.stream import MistralStream, event_batches
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.http import finish_answer, guarded
from ctxmodes.providers.transport.call import TERMINATED, CallContext, stream_simple
from ctxmodes.providers.transport.history import transform_messages
from ctxmodes.providers.transport.retry import unreachable_message
from ctxmodes.providers.wire import PiContext, PiMessage, StreamOptions, WireError

API = "mistral-conversations"
#: Pi's timeout when none is given.
DEFAULT_TIMEOUT_MS = 60_000
MAX_ERROR_BODY_CHARS = 4000
#: What Node says when a request's own timeout ends it, and when the caller aborts it.
TIMED_OUT = "The operation was aborted due to timeout"
ABORTED = "This operation was aborted"


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """No developer role (harness messages join the system message); images and reasoning
    as the model's table says."""
    return ModelCapabilities(developer_role=False, images=model.images, reasoning=model.reasoning)


def _error_text(status: int, body: str, reason: str) -> str:
    text = body.strip()
    if text:
        if len(text) > MAX_ERROR_BODY_CHARS:
            cut = len(text) - MAX_ERROR_BODY_CHARS
            text = f"{text[:MAX_ERROR_BODY_CHARS]}... [truncated {cut} chars]"
        return f"Mistral API error ({status}): {text}"
    return f"Mistral API error ({status}): {reason or f'Request failed with status {status}'}"


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    api_key: str,
    effort: str | None,
    output: PiMessage,
) -> None:
    messages = transform_messages(context.messages, model, tool_call_id_normalizer(), call.now_ms)
    body = build_body(model, context.system_prompt, messages, context.tools, options, effort)
    headers = build_headers(model, options, api_key, call.user_agent)
    timeout_ms = options.timeout_ms or DEFAULT_TIMEOUT_MS
    reader = MistralStream(model, output, call.emit)
    # One deadline for the request and its stream (Pi's AbortSignal.timeout).
    with guarded(call.signal, timeout_ms / 1000) as scope:
        try:
            _exchange(call, chat_url(model.base_url), headers, body, reader)
        except (httpx.HTTPError, WireError) as error:
            if scope.expired:
                raise WireError(TIMED_OUT) from error
            if call.signal.aborted:
                raise WireError(ABORTED) from error
            raise
        if scope.expired:
            raise WireError(TIMED_OUT)
    if call.signal.aborted:
        raise WireError(ABORTED)
    if output["stopReason"] == "pending":
        raise WireError("Mistral stream ended without a finish reason")
    if output["stopReason"] in ("aborted", "error"):
        raise WireError(output.get("errorMessage") or "An unknown error occurred")


def _exchange(
    call: CallContext,
    url: str,
    headers: dict[str, str],
    body: dict[str, object],
    reader: MistralStream,
) -> None:
    client = call.client(None)
    request = client.build_request("POST", url, headers=headers, content=call.encode(body))
    try:
        response = client.send(request, stream=True)
    except httpx.TransportError as error:
        raise WireError(unreachable_message(url, error, "fetch failed")) from error
    with contextlib.closing(response):
        if not response.is_success:
            text = response.read().decode("utf-8", "replace")
            raise WireError(_error_text(response.status_code, text, response.reason_phrase))
        call.started()
        texts = response.iter_text()
        signal = call.signal
        try:
            # Not through ``call.guard``: an abort shuts the socket down (the read ends at
            # once), and a transport error after an abort reads as the abort (see ``_call``).
            for batch in event_batches(texts):
                if signal.aborted:
                    break
                for data in batch:
                    chunk = orjson.loads(data)
                    if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
                        raise WireError("Invalid Mistral streaming event")
                    reader.feed(chunk)
        except orjson.JSONDecodeError as error:
            raise WireError(f"Invalid Mistral streaming event: {error}") from error
        except httpx.TransportError as error:
            raise WireError(TERMINATED) from error
        if not call.signal.aborted:
            # Pi stops reading at ``[DONE]`` too; the rest of the body is read (not parsed)
            # so that the connection can serve the next call.
            finish_answer(response, texts)
    reader.finish()


#: One call, pi-ai's ``streamSimple``: returns the final message (also on failure).
stream = stream_simple(API, _call)
