import json
import re

import pytest

from ctxmodes.errors import CtxmodesError
from ctxmodes.windows.identity import WindowIdentity, next_identity
from ctxmodes.windows.marker import (
    CONTEXT_WINDOW_CUSTOM_TYPE,
    FALLBACK_TEXT,
    MalformedMarkerError,
    fallback_marker,
    parse_marker_details,
    reminder_marker,
    window_marker,
)

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# Details as the TypeScript extension writes them: `{protocol, id, contextManagement:
# {protocol, kind, ...identity, ...trim}}` with the identity spread in the order
# firstWindowId, currentWindowId, previousWindowId?, windowNumber.
EXTENSION_DETAILS = [
    '{"protocol":1,"id":"0d3c0c1e-3f43-4c8e-9a51-1c3b0f2e6a11","contextManagement":'
    '{"protocol":1,"kind":"window","firstWindowId":"a1","currentWindowId":"a1","windowNumber":0}}',
    '{"protocol":1,"id":"5f0a2d55-8a5e-4d9e-b1b4-6a3f1f4a9c02","contextManagement":'
    '{"protocol":1,"kind":"window","firstWindowId":"a1","currentWindowId":"b2",'
    '"previousWindowId":"a1","windowNumber":1,"trimPreviousWindow":true}}',
    '{"protocol":1,"id":"x","contextManagement":{"protocol":1,"kind":"reminder",'
    '"firstWindowId":"a1","currentWindowId":"b2","previousWindowId":"a1","windowNumber":1}}',
    '{"protocol":1,"id":"y","contextManagement":{"protocol":1,"kind":"fallback",'
    '"firstWindowId":"a1","currentWindowId":"b2","previousWindowId":"a1","windowNumber":1}}',
]


@pytest.mark.parametrize("line", EXTENSION_DETAILS)
def test_extension_details_round_trip_byte_exact(line):
    assert compact(parse_marker_details(json.loads(line)).dump()) == line


def test_built_marker_has_the_extension_key_order():
    identity = WindowIdentity.first("a1").advance("b2")
    details = window_marker(identity, trim_previous_window=True).details.dump()
    assert list(details) == ["protocol", "id", "contextManagement"]
    assert list(details["contextManagement"]) == [
        "protocol",
        "kind",
        "firstWindowId",
        "currentWindowId",
        "previousWindowId",
        "windowNumber",
        "trimPreviousWindow",
    ]
    assert UUID.match(details["id"])
    assert details["contextManagement"]["trimPreviousWindow"] is True


def test_window_zero_omits_previous_and_trim():
    details = window_marker(WindowIdentity.first("a1")).details.dump()
    assert details["contextManagement"] == {
        "protocol": 1,
        "kind": "window",
        "firstWindowId": "a1",
        "currentWindowId": "a1",
        "windowNumber": 0,
    }


def test_marker_ids_are_fresh_uuids():
    identity = WindowIdentity.first()
    assert UUID.match(identity.current_window_id)
    first, second = window_marker(identity), window_marker(identity)
    assert first.details.id != second.details.id


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: None,
        lambda d: "text",
        lambda d: {**d, "protocol": 2},
        lambda d: {**d, "id": ""},
        lambda d: {k: v for k, v in d.items() if k != "contextManagement"},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "kind": "urgent"}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "firstWindowId": ""}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "currentWindowId": 7}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "windowNumber": -1}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "windowNumber": "1"}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "windowNumber": 1.5}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "windowNumber": True}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "previousWindowId": None}},
        lambda d: {**d, "contextManagement": {**d["contextManagement"], "previousWindowId": 3}},
        lambda d: {
            **d,
            "contextManagement": {**d["contextManagement"], "trimPreviousWindow": False},
        },
    ],
)
def test_malformed_details_raise_the_reference_message(mutate):
    valid = json.loads(EXTENSION_DETAILS[1])
    with pytest.raises(MalformedMarkerError) as caught:
        parse_marker_details(mutate(valid))
    assert isinstance(caught.value, CtxmodesError)
    assert str(caught.value) == "Malformed persisted Codex context-window message"


def test_unknown_keys_are_tolerated():
    valid = json.loads(EXTENSION_DETAILS[0])
    valid["contextManagement"]["agentName"] = "/root"
    valid["renderer"] = {"purple": True}
    assert parse_marker_details(valid).context_management.current_window_id == "a1"


def test_window_text_layout():
    identity = WindowIdentity("first", "current", "previous", 2)
    text = window_marker(identity, "Recent notes (up to 5, most-recent first):\n- x").content
    guidance, block = text.split("\n\n")
    assert guidance.startswith("<context_window_guidance>\n")
    assert guidance.endswith("\n</context_window_guidance>")
    assert block.split("\n") == [
        "<context_window>",
        "Agent name: /root",
        "First context window id: first",
        "Current context window id: current",
        "Previous context window id: previous",
        "Recent notes (up to 5, most-recent first):",
        "- x",
        "</context_window>",
    ]


def test_first_window_text_has_no_previous_line():
    text = window_marker(WindowIdentity.first("w0")).content
    assert "Previous context window id" not in text
    assert text.endswith("Current context window id: w0\n</context_window>")


def test_reminder_and_fallback_markers():
    identity = WindowIdentity.first("w0").advance("w1")
    reminder = reminder_marker(identity, 6000)
    assert reminder.kind == "reminder"
    assert reminder.identity == identity
    assert reminder.content.startswith("<context_window_reminder>\n")
    assert "6000 tokens" in reminder.content
    assert reminder.content.endswith("\n</context_window_reminder>")
    fallback = fallback_marker(identity)
    assert fallback.kind == "fallback"
    assert fallback.content == FALLBACK_TEXT
    assert fallback.content.startswith("<context_window_reminder>\n")
    assert fallback.custom_type == CONTEXT_WINDOW_CUSTOM_TYPE
    assert fallback.display is True


def test_identity_lineage():
    zero = next_identity(None, "a")
    assert zero == WindowIdentity("a", "a", None, 0)
    one = next_identity(zero, "b")
    assert one == WindowIdentity("a", "b", "a", 1)
    two = one.advance("c")
    assert two == WindowIdentity("a", "c", "b", 2)
    parsed = parse_marker_details(window_marker(two).details.dump())
    assert parsed.context_management.identity() == two
