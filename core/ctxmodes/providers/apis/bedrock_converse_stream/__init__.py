"""``bedrock-converse-stream``: Amazon Bedrock's ConverseStream
(``POST <endpoint>/model/<id>/converse-stream``), answered in AWS event-stream framing.

As pi-ai 0.85 speaks it through the AWS SDK for JavaScript: the request body of
:mod:`.request`, sent and retried as the SDK does (:mod:`.client`: bearer key or SigV4,
HTTP/2, the SDK's own three attempts whatever Pi's retry setting says), read as
:mod:`.stream`. Unlike the other wire formats no key is required: AWS credentials may come
from the environment, a profile or a role. One deliberate difference: Pi sets no timeout on
Bedrock requests; ctxmodes uses the call's timeout as the idle limit of a read, so a stalled
stream fails instead of hanging.

Converse has no developer role: ctxmodes' harness messages go as system blocks after Pi's
system prompt (:func:`.request.system_blocks`).
"""

from __future__ import annotations

import contextlib
import functools

from ctxmodes.providers.apis.bedrock_converse_stream import client
from ctxmodes.providers.apis.bedrock_converse_stream.request import (
    adaptive_thinking,
    additional_fields,
    cache_retention,
    convert_messages,
    is_claude,
    setting,
    system_blocks,
    tool_config,
)
from ctxmodes.providers.apis.bedrock_converse_stream.stream import ConverseStream
from ctxmodes.providers.base import ModelCapabilities
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.transport.budget import budget_level, clamp_max_tokens, fit_thinking
from ctxmodes.providers.transport.call import CallContext
from ctxmodes.providers.wire import (
    ABORTED,
    JsonObject,
    PiContext,
    PiMessage,
    StreamOptions,
    WireError,
)

API = "bedrock-converse-stream"
#: Over-long diagnostic values are dropped, as Pi drops them.
MAX_DIAGNOSTIC_CHARS = 200


def capabilities(model: ModelSpec) -> ModelCapabilities:
    """No developer role (harness messages become system blocks)."""
    return ModelCapabilities(developer_role=False, images=model.images, reasoning=model.reasoning)


def _budgets(
    model: ModelSpec, context: PiContext, options: StreamOptions, level: str, max_tokens: int
) -> tuple[int, dict[str, int]]:
    """pi-ai's ``streamSimple`` for budget-thinking Claude models: the output cap and the
    budget of the level's thinking (see :func:`fit_thinking`)."""
    cap, budget = fit_thinking(model, context, max_tokens, level, options.thinking_budgets)
    return cap, {budget_level(level): budget}


def stream(
    model: ModelSpec, context: PiContext, options: StreamOptions, call: CallContext
) -> PiMessage:
    """One call, pi-ai's ``streamSimple``: returns the final message (also on failure)."""
    max_tokens = clamp_max_tokens(model, context, options.max_tokens)
    level = options.reasoning or None
    budgets: dict[str, int] = {}
    if level and is_claude(model) and not adaptive_thinking(model):
        max_tokens, budgets = _budgets(model, context, options, level, max_tokens)
    body = functools.partial(_call, model, context, options, call, max_tokens, level, budgets)
    return call.run(model, API, body)


def _body(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    max_tokens: int,
    level: str | None,
    budgets: dict[str, int],
) -> JsonObject:
    env = options.env
    retention = cache_retention(options.cache_retention, env)
    inference: JsonObject = {"maxTokens": max_tokens}
    if options.temperature is not None:
        inference["temperature"] = options.temperature
    configured_region = setting("AWS_REGION", env) or setting("AWS_DEFAULT_REGION", env)
    body: JsonObject = {
        "messages": convert_messages(model, context.messages, retention, env, call.now_ms),
        "system": system_blocks(context.system_prompt, context.messages, model, retention, env),
        "inferenceConfig": inference,
        "toolConfig": tool_config(
            context.tools, options.tool_choice, model.flag("supportsStrictMode", False)
        ),
        "additionalModelRequestFields": additional_fields(model, level, budgets, configured_region),
    }
    return {key: value for key, value in body.items() if value is not None}


def _call(
    model: ModelSpec,
    context: PiContext,
    options: StreamOptions,
    call: CallContext,
    max_tokens: int,
    level: str | None,
    budgets: dict[str, int],
    output: PiMessage,
) -> None:
    reader = ConverseStream(model, output, call.emit, call.started)
    request_id: str | None = None
    try:
        body = _body(model, context, options, call, max_tokens, level, budgets)
        target = client.resolve_target(model, options.api_key, options.env)
        response = client.send(
            call, target, call.encode(body), options.headers, options.env, options.timeout_ms
        )
        request_id = response.headers.get("x-amzn-requestid")
        with contextlib.closing(response):
            for kind, name, payload in call.guard(client.events(response), call.signal):
                if kind == "exception":
                    exception = name[:1].upper() + name[1:]
                    message = payload.get("message") or payload.get("Message") or exception
                    raise client.BedrockError(exception, str(message), request_id=request_id)
                reader.feed(name, payload)
        if call.signal.aborted:
            raise WireError(ABORTED)
        if output["stopReason"] == "pending":
            raise WireError("Bedrock stream ended without a stop reason")
        if output["stopReason"] in ("error", "aborted"):
            raise WireError(output.get("errorMessage") or "An unknown error occurred")
    except WireError as error:
        reader.finish()
        if not call.signal.aborted:
            _diagnose(output, error, request_id, call.now_ms())
        raise
    reader.finish()


def _short(value: str | None) -> str | None:
    text = (value or "").strip()
    return text if text and len(text) <= MAX_DIAGNOSTIC_CHARS else None


def _diagnose(output: PiMessage, error: WireError, request_id: str | None, now: int) -> None:
    """Pi's ``bedrock_response_failure`` diagnostic: status, error code and request id,
    where known (never guessed)."""
    details: JsonObject = {}
    if isinstance(error, client.BedrockError):
        if error.status is not None:
            details["status"] = error.status
        if error.name.endswith("Exception") and _short(error.name):
            details["errorCode"] = error.name
        request_id = _short(error.request_id) or request_id
    if _short(request_id):
        details["requestId"] = _short(request_id)
    if details:
        diagnostic = {"type": "bedrock_response_failure", "timestamp": now, "details": details}
        output["diagnostics"] = [*output.get("diagnostics", []), diagnostic]
