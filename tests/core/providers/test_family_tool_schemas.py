"""The ``history`` and ``notes`` tools (and the window tools) as Anthropic and Gemini receive
them: Anthropic's schema reduction keeps everything the routers need (only the top-level
``additionalProperties`` goes), and Gemini's function declarations take the names and the
JSON Schema keywords the routers use."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ctxmodes.providers.apis.anthropic_messages.request import Thinking
from ctxmodes.providers.apis.anthropic_messages.request import build_body as anthropic_body
from ctxmodes.providers.apis.google.request import GoogleThinking
from ctxmodes.providers.apis.google.request import build_body as google_body
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import PiContext, StreamOptions
from ctxmodes.windows.tools import GET_CONTEXT_REMAINING, NEW_CONTEXT, OPERATIONS, flat_router

#: Anthropic's tool names.
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Gemini's function names.
GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
#: The JSON Schema keywords Gemini's ``parametersJsonSchema`` documents.
GEMINI_KEYWORDS = frozenset(
    {
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "oneOf",
        "properties",
        "additionalProperties",
        "required",
    }
)


def _tools() -> list[dict[str, Any]]:
    """The tools as a provider hands them to a transport (pi-ai's tool shape)."""
    tools = [flat_router("history"), flat_router("notes"), NEW_CONTEXT, GET_CONTEXT_REMAINING]
    return [
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
        for tool in tools
    ]


def _model(api: str, model_id: str) -> ModelSpec:
    return ModelSpec.model_validate(
        {"id": model_id, "api": api, "provider": "p", "baseUrl": "http://127.0.0.1:9"}
    )


def _context() -> PiContext:
    return PiContext("system", [{"role": "user", "content": "hi", "timestamp": 1}], _tools())


def _keywords(schema: Any) -> set[str]:
    """Every schema keyword used, below ``properties`` maps too (not the property names)."""
    if isinstance(schema, list):
        return set().union(*(_keywords(item) for item in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema) - {"properties"}
    for key, value in schema.items():
        if key == "properties":
            found |= set().union(*(_keywords(item) for item in value.values()))
        elif key in ("items", "anyOf", "oneOf", "additionalProperties"):
            found |= _keywords(value)
    return found


@pytest.mark.parametrize("oauth", [False, True], ids=["api-key", "oauth"])
def test_anthropic_keeps_every_field_action_and_requirement(oauth: bool) -> None:
    model = _model("anthropic-messages", "claude-sonnet-4-5")
    body = anthropic_body(
        model, _context(), StreamOptions(), oauth=oauth, thinking=Thinking(False), now_ms=lambda: 0
    )
    sent = {tool["name"]: tool["input_schema"] for tool in body["tools"]}
    assert list(sent) == ["history", "notes", "new_context", "get_context_remaining"]
    for name, schema in sent.items():
        assert ANTHROPIC_NAME.match(name)
        original = next(tool["parameters"] for tool in _tools() if tool["name"] == name)
        # Reduced to type/properties/required: nested schemas (enums, nullable anyOf,
        # minimums, descriptions) arrive as they are.
        assert schema == {
            "type": "object",
            "properties": original["properties"],
            "required": original.get("required", []),
        }
    for family in ("history", "notes"):
        properties = sent[family]["properties"]
        assert properties["action"]["enum"] == list(OPERATIONS[family])
        assert sent[family]["required"] == ["action"]
        for operation in OPERATIONS[family].values():
            assert set(operation.fields) <= set(properties)


@pytest.mark.parametrize("api", ["google-generative-ai", "google-vertex"])
@pytest.mark.parametrize("model_id", ["gemini-2.5-flash", "gemini-3-flash-preview"])
def test_gemini_declares_the_tools_with_their_whole_schemas(api: str, model_id: str) -> None:
    model = _model(api, model_id)
    body = google_body(
        model, _context(), StreamOptions(), GoogleThinking(False), {}, now_ms=lambda: 0
    )
    (tools,) = body["tools"]
    declared = {
        item["name"]: item["parametersJsonSchema"] for item in tools["functionDeclarations"]
    }
    assert declared == {tool["name"]: tool["parameters"] for tool in _tools()}
    for name, schema in declared.items():
        assert GEMINI_NAME.match(name)
        assert _keywords(schema) <= GEMINI_KEYWORDS, name
