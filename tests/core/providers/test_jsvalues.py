"""Partial JSON as pi-ai parses streaming tool-call arguments."""

from __future__ import annotations

import json
from typing import Any

import jiter
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmodes.providers.jsvalues import parse_streaming_json, repair_json


def _reference(text: str) -> Any:
    """pi-ai's order without any shortcut: parse, repair and parse, longest valid prefix."""
    if not text.strip():
        return {}
    for candidate in (text, repair_json(text)):
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    for candidate in (text, repair_json(text)):
        try:
            result = jiter.from_json(candidate.encode(), partial_mode="trailing-strings")
            return {} if result is None else result
        except ValueError:
            pass
    return {}


_PIECES = st.sampled_from(
    ['{"', "a", '":', '"', "\\", "n", "q", "u12", "u00e9", "\n", "\t", "1", ",", "}", "[", "]", " "]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=24))
def test_streaming_parse_equals_the_full_procedure(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert parse_streaming_json(text) == _reference(text)


def test_a_cut_argument_keeps_what_arrived() -> None:
    text = json.dumps({"path": "a.txt", "content": "one\ntwo\tthree"})[:-6]
    assert parse_streaming_json(text) == {"path": "a.txt", "content": "one\ntwo\tt"}
    assert parse_streaming_json('{"a": "raw\nnewline"}') == {"a": "raw\nnewline"}
