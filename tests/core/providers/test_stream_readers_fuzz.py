"""Whatever JSON a server streams, the Anthropic and Gemini readers either take it or fail the
call with an error message: never an exception that would escape as a traceback."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodes.providers.apis.anthropic_messages.stream import MessagesStream
from ctxmodes.providers.apis.google.stream import GenerateStream
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import WireError, WireEvent, new_output

# Fuzzing: the slow tier, outside `make check`.
pytestmark = pytest.mark.slow

MODEL = ModelSpec.model_validate(
    {"id": "m", "api": "anthropic-messages", "provider": "p", "baseUrl": "http://127.0.0.1:9"}
)
#: The names the readers look at, so that generated events reach their branches.
KEYS = st.sampled_from(
    [
        "type",
        "index",
        "message",
        "content_block",
        "delta",
        "usage",
        "text",
        "thinking",
        "partial_json",
        "signature",
        "stop_reason",
        "stop_details",
        "id",
        "model",
        "name",
        "input",
        "data",
        "candidates",
        "content",
        "parts",
        "thought",
        "thoughtSignature",
        "functionCall",
        "args",
        "finishReason",
        "usageMetadata",
        "responseId",
        "promptTokenCount",
        "candidatesTokenCount",
        "thoughtsTokenCount",
        "input_tokens",
        "output_tokens",
    ]
)
VALUES = st.sampled_from(
    [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "text",
        "thinking",
        "tool_use",
        "redacted_thinking",
        "text_delta",
        "thinking_delta",
        "input_json_delta",
        "signature_delta",
        "end_turn",
        "tool_use",
        "refusal",
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
    ]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | VALUES | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=25,
)
events = st.lists(st.dictionaries(KEYS, json_values, max_size=5), max_size=8)


def _ignore(_: WireEvent) -> None:
    return None


def _feed(reader: Any, sequence: list[dict[str, Any]]) -> None:
    try:
        for event in sequence:
            reader.feed(event)
    except WireError:
        pass  # a failed call, with its message


@settings(max_examples=300, deadline=None)
@given(sequence=events)
def test_anthropic_events_never_escape_as_exceptions(sequence: list[dict[str, Any]]) -> None:
    output = new_output(MODEL, "anthropic-messages", 0)
    _feed(MessagesStream(MODEL, output, _ignore), sequence)


@settings(max_examples=300, deadline=None)
@given(sequence=events)
def test_gemini_chunks_never_escape_as_exceptions(sequence: list[dict[str, Any]]) -> None:
    output = new_output(MODEL, "google-generative-ai", 0)
    reader = GenerateStream(MODEL, output, _ignore, lambda: 0)
    _feed(reader, sequence)
    reader.finish()


def test_an_anthropic_block_index_that_is_an_array_or_object_matches_no_block() -> None:
    # As Pi's ``===``: an array or object index is never the index of an open block, even an
    # equal one, and is no traceback; a number is not the boolean of the same value.
    output = new_output(MODEL, "anthropic-messages", 0)
    reader = MessagesStream(MODEL, output, _ignore)

    def delta(index: object, text: str) -> None:
        reader.feed(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": text},
            }
        )

    for index in ([], {"a": 1}, True):
        reader.feed(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text"}}
        )
        delta(index, "own")
    delta([], "equal array")
    delta(1, "a number")
    assert [block["text"] for block in output["content"]] == ["", "", "own"]
