from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ctxmodes.session import codec
from ctxmodes.session.models import (
    AssistantMessage,
    CustomEntry,
    ImageContent,
    LabelEntry,
    MessageEntry,
    SessionHeader,
    TextContent,
    ToolCall,
    UnknownContent,
    UnknownEntry,
    UnknownMessage,
    Usage,
    UserMessage,
    entry_from_json,
    message_from_json,
    to_json,
)


def test_every_pi_entry_validates_and_dumps_to_the_same_bytes(oracle_cases: Path) -> None:
    unknown = []
    for path in sorted(oracle_cases.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                record = codec.loads(line)
            except codec.JsonDecodeError:
                continue
            if not isinstance(record, dict) or "id" not in record or record["type"] == "session":
                if isinstance(record, dict) and record.get("type") == "session":
                    header = SessionHeader.model_validate(record)
                    assert codec.dumps(to_json(header)) == line.rstrip(b"\r")
                continue
            entry = entry_from_json(record)
            assert codec.dumps(to_json(entry)) == line.rstrip(b"\r"), line[:100]
            if isinstance(entry, UnknownEntry):
                unknown.append((path.name, record["type"]))
            elif isinstance(entry, MessageEntry):
                assert not isinstance(entry.message, UnknownMessage), line[:100]
    # Only the deliberately odd hand-written records are not recognised.
    assert sorted(unknown) == [
        ("foreign_leaf_is_label_and_unknown_types.jsonl", "some_future_type"),
        ("foreign_missing_optional_fields.jsonl", "branch_summary"),
        ("foreign_missing_optional_fields.jsonl", "custom_message"),
    ]


def test_models_are_frozen_snake_case_and_accept_aliases() -> None:
    block = TextContent(text="t", text_signature="s")
    assert to_json(block) == {"type": "text", "text": "t", "textSignature": "s"}
    assert TextContent.model_validate({"text": "t", "textSignature": "s"}) == block
    with pytest.raises(ValidationError):
        block.text = "other"  # type: ignore[misc]
    usage = Usage.model_validate(
        {
            "input": 1,
            "output": 2,
            "cacheRead": 0,
            "cacheWrite": 0,
            "cacheWrite1h": 0,
            "totalTokens": 3,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
    )
    assert usage.cache_write_1h == 0
    assert "cacheWrite1h" in to_json(usage)


def test_unknown_fields_and_types_survive() -> None:
    record = {"type": "future", "id": "x", "parentId": None, "timestamp": "t", "payload": [1]}
    entry = entry_from_json(record)
    assert isinstance(entry, UnknownEntry)
    assert to_json(entry) == record
    message = message_from_json(
        {"role": "user", "content": [{"type": "audio", "blob": 1}], "timestamp": 1, "extra": True}
    )
    assert isinstance(message, UserMessage)
    assert isinstance(message.content[0], UnknownContent)  # type: ignore[index]
    assert to_json(message)["extra"] is True
    odd = entry_from_json({"type": "label", "id": "l", "parentId": 7, "timestamp": "t"})
    assert isinstance(odd, UnknownEntry)
    assert odd.parent_id is None


def test_models_built_in_python_serialise_in_pis_key_order() -> None:
    message = AssistantMessage(
        content=[ToolCall(id="c", name="read", arguments={"path": "a"})],
        api="anthropic-messages",
        provider="anthropic",
        model="m",
        usage=Usage.model_validate(
            {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            }
        ),
        stop_reason="toolUse",
        timestamp=5,
    )
    assert list(to_json(message)) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
    ]
    custom = CustomEntry(custom_type="x", id="i", parent_id=None, timestamp="t")
    assert list(to_json(custom)) == ["type", "customType", "id", "parentId", "timestamp"]
    label = LabelEntry(id="l", parent_id="p", timestamp="t", target_id="x")
    assert to_json(label) == {
        "type": "label",
        "id": "l",
        "parentId": "p",
        "timestamp": "t",
        "targetId": "x",
    }


@pytest.mark.parametrize(
    "line",
    [
        # Pi's @FILE attachment (cli/file-processor.js) and its read tool (core/tools/read.js).
        b'{"role":"user","content":[{"type":"text","text":"look"},'
        b'{"type":"image","mimeType":"image/png","data":"iVBO"}],"timestamp":1}',
        b'{"role":"toolResult","toolCallId":"c","toolName":"read","content":'
        b'[{"type":"image","data":"R0lG","mimeType":"image/gif"}],"isError":false,"timestamp":2}',
    ],
)
def test_an_image_block_is_written_back_in_the_key_order_it_was_read(line: bytes) -> None:
    assert codec.dumps(to_json(message_from_json(codec.loads(line)))) == line


_USAGE = (
    b'"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,'
    b'"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}'
)


@pytest.mark.parametrize(
    "line",
    [
        # Pi's transports start every answer with the same keys and add the response id, the
        # raw stop reason and so on as the stream brings them; Anthropic's usage gets
        # cacheWrite1h after its cost.
        b'{"role":"assistant","content":[],"api":"openai-completions","provider":"p",'
        b'"model":"m",' + _USAGE + b'},"stopReason":"stop","timestamp":1,"responseId":"c1",'
        b'"rawStopReason":"stop"}',
        b'{"role":"assistant","content":[],"api":"anthropic-messages","provider":"p",'
        b'"model":"m",' + _USAGE + b',"cacheWrite1h":0},"stopReason":"stop","timestamp":1,'
        b'"responseId":"msg_1","rawStopReason":"end_turn"}',
        # Pi's message for a run that broke: its error before the timestamp.
        b'{"role":"assistant","content":[{"type":"text","text":""}],"api":"a","provider":"p",'
        b'"model":"m",' + _USAGE + b'},"stopReason":"error","errorMessage":"boom",'
        b'"timestamp":1}',
    ],
)
def test_an_answer_is_written_back_in_the_key_order_it_was_made(line: bytes) -> None:
    message = message_from_json(codec.loads(line))
    assert codec.dumps(to_json(message)) == line
    entry = {"type": "message", "id": "a", "parentId": None, "timestamp": "t"}
    stored = codec.dumps({**entry, "message": codec.loads(line)})
    assert codec.dumps(to_json(entry_from_json(codec.loads(stored)))) == stored


def test_a_key_set_on_a_read_answer_keeps_the_place_it_is_declared_at() -> None:
    line = (
        b'{"role":"assistant","content":[],"api":"a","provider":"p","model":"m",'
        + _USAGE
        + b'},"stopReason":"stop","timestamp":1,"responseId":"r"}'
    )
    message = message_from_json(codec.loads(line))
    assert isinstance(message, AssistantMessage)
    failed = message.model_copy(update={"stop_reason": "error", "error_message": "e"})
    # Declared, errorMessage is the ninth key of ten written; the keys read fill the others.
    assert list(to_json(failed)) == [
        "role", "content", "api", "provider", "model", "usage", "stopReason",
        "timestamp", "errorMessage", "responseId",
    ]  # fmt: skip
    # Built in Python, an answer takes its keyword arguments' order.
    built = AssistantMessage(
        content=[], api="a", provider="p", model="m", usage=message.usage,
        stop_reason="stop", timestamp=1, response_id="r",
    )  # fmt: skip
    assert codec.dumps(to_json(built)) == line


def test_an_image_built_in_python_is_written_in_the_order_of_its_arguments() -> None:
    attached = ImageContent(mime_type="image/png", data="A")
    read = ImageContent(data="A", mime_type="image/png")
    assert list(to_json(attached)) == ["type", "mimeType", "data"]
    assert list(to_json(read)) == ["type", "data", "mimeType"]
    message = UserMessage(content=[TextContent(text="t"), attached, read], timestamp=1)
    assert codec.dumps(to_json(message)) == (
        b'{"role":"user","content":[{"type":"text","text":"t"},'
        b'{"type":"image","mimeType":"image/png","data":"A"},'
        b'{"type":"image","data":"A","mimeType":"image/png"}],"timestamp":1}'
    )
    assert attached.model_copy() == attached
    # The order is how the block is written, not what it is.
    assert attached == read
    assert attached != ImageContent(mime_type="image/png", data="B")


def test_validation_is_strict() -> None:
    with pytest.raises(ValidationError):
        TextContent.model_validate({"type": "text", "text": 5})
    assert isinstance(
        message_from_json({"role": "user", "content": "x", "timestamp": "1"}), UnknownMessage
    )
