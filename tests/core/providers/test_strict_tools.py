"""A tool's ``strict_sampling`` reaches the wire: strict tools over real loopback HTTP, from
the host's tool schema to the request body (what Pi sends for each case is pinned by the
differential cases ``*_strict_tools_*`` in ``cases/``)."""

from __future__ import annotations

import json

from support.wire_server import Reply, WireServer, completions_provider, text_stream

from ctxmodes.abort import AbortController
from ctxmodes.providers.base import ModelRequest, StreamDone, StreamError, ToolSchema
from ctxmodes.session.models import UserMessage

API = "openai-completions"
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
}


def _request(*tools: ToolSchema) -> ModelRequest:
    return ModelRequest(
        system_prompt="s", messages=[UserMessage(content="hi", timestamp=1)], tools=list(tools)
    )


def test_a_tool_preferring_strict_sampling_is_sent_strict_with_a_closed_schema() -> None:
    tools = [
        ToolSchema(name="read", description="Read.", parameters=SCHEMA, strict_sampling="prefer"),
        ToolSchema(name="plain", description="Plain.", parameters=SCHEMA),
    ]
    with WireServer([Reply(text_stream(API, "ok"))]) as server:
        provider = completions_provider(server)
        events = list(provider.stream(_request(*tools), AbortController().signal))
        provider.close()
    assert isinstance(events[-1], StreamDone)
    sent = json.loads(server.requests[0]["body"])["tools"]
    strict, plain = (tool["function"] for tool in sent)
    assert strict["strict"] is True
    assert strict["parameters"] == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["path", "limit"],
        "additionalProperties": False,
    }
    assert plain["strict"] is False
    assert plain["parameters"] == SCHEMA


def test_a_tool_requiring_strict_sampling_fails_the_turn_on_a_server_without_it() -> None:
    tool = ToolSchema(
        name="read", description="Read.", parameters=SCHEMA, strict_sampling="require"
    )
    with WireServer([Reply(text_stream(API, "never"))]) as server:
        provider = completions_provider(server, compat={"supportsStrictMode": False})
        events = list(provider.stream(_request(tool), AbortController().signal))
        provider.close()
    assert not server.requests
    (failed,) = events
    assert isinstance(failed, StreamError)
    assert failed.message.error_message == (
        'Tool "read" requires JSON-schema constrained sampling, but strict tools are unsupported.'
    )


def test_the_setting_is_left_out_of_a_dump_when_unset() -> None:
    plain = ToolSchema(name="plain", description="d", parameters=SCHEMA)
    assert plain.model_dump() == {"name": "plain", "description": "d", "parameters": SCHEMA}
    strict = plain.model_copy(update={"strict_sampling": "prefer"})
    assert strict.model_dump()["strict_sampling"] == "prefer"
