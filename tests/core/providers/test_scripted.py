from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from support.pi_oracle import oracle_dir

from ctxmodes.abort import AbortController
from ctxmodes.errors import CtxmodesError
from ctxmodes.providers.base import (
    ModelRequest,
    StreamDone,
    StreamError,
    TextDelta,
    ThinkingComplete,
    ThinkingDelta,
    ToolCallComplete,
    UsageUpdate,
)
from ctxmodes.providers.script import Script, ScriptError, load_script
from ctxmodes.providers.scripted import ScriptedProvider, ScriptExhaustedError
from ctxmodes.session.models import TextContent, ToolResultMessage, UserMessage, to_json


def _request(text: str = "hello", purpose: str = "turn") -> ModelRequest:
    message = UserMessage(content=[TextContent(text=text)], timestamp=1)
    return ModelRequest(system_prompt="sys", messages=[message], purpose=purpose)


def _provider(**script) -> ScriptedProvider:
    return ScriptedProvider(Script.model_validate(script))


def _signal():
    return AbortController().signal


def test_turns_consume_responses_in_order():
    provider = _provider(responses=[{"text": "first"}, {"text": "second"}])
    texts = [provider.complete(_request(), _signal()).content[0].text for _ in range(2)]
    assert texts == ["first", "second"]


def test_exhausted_script_names_the_call():
    provider = _provider(responses=[{"text": "only"}])
    provider.complete(_request(), _signal())
    with pytest.raises(ScriptExhaustedError) as caught:
        provider.stream(_request(), _signal())
    message = str(caught.value)
    assert "call 2 (purpose turn)" in message
    assert "1 response(s)" in message
    assert "\n" not in message
    assert isinstance(caught.value, CtxmodesError)


def test_message_is_shaped_like_pi():
    provider = _provider(
        responses=[
            {
                "thinking": "plan",
                "text": "running it",
                "tool_calls": [
                    {"name": "bash", "arguments": {"command": "ls"}},
                    {"name": "list_items", "arguments": {}, "namespace": "history"},
                ],
            }
        ]
    )
    message = provider.complete(_request(), _signal())
    stored = to_json(message)
    assert list(stored) == [
        "role",
        "content",
        "api",
        "provider",
        "model",
        "usage",
        "stopReason",
        "timestamp",
    ]
    assert stored["role"] == "assistant"
    assert (stored["api"], stored["provider"], stored["model"]) == (
        "scripted",
        "scripted",
        "scripted",
    )
    assert stored["stopReason"] == "toolUse"
    assert [block["type"] for block in stored["content"]] == [
        "thinking",
        "text",
        "toolCall",
        "toolCall",
    ]
    first_call, second_call = stored["content"][2:]
    assert first_call == {
        "type": "toolCall",
        "id": "call_1_0",
        "name": "bash",
        "arguments": {"command": "ls"},
    }
    assert second_call["namespace"] == "history"
    assert second_call["id"] == "call_1_1"
    assert isinstance(stored["timestamp"], int)


def test_plain_text_response_stops():
    message = _provider(responses=[{"text": "done"}]).complete(_request(), _signal())
    assert message.stop_reason == "stop"
    assert message.error_message is None


def test_events_arrive_in_content_order():
    provider = ScriptedProvider(
        Script.model_validate(
            {"responses": [{"thinking": "ab", "text": "cdef", "tool_calls": [{"name": "x"}]}]}
        ),
        chunk_chars=2,
    )
    events = list(provider.stream(_request(), _signal()))
    kinds = [(type(event).__name__, getattr(event, "content_index", None)) for event in events]
    assert kinds == [
        ("ThinkingDelta", 0),
        ("ThinkingComplete", 0),
        ("TextDelta", 1),
        ("TextDelta", 1),
        ("ToolCallComplete", 2),
        ("UsageUpdate", None),
        ("StreamDone", None),
    ]
    assert "".join(e.delta for e in events if isinstance(e, TextDelta)) == "cdef"
    assert isinstance(events[0], ThinkingDelta)
    assert isinstance(events[1], ThinkingComplete)
    assert events[1].block == events[-1].message.content[0]
    assert isinstance(events[4], ToolCallComplete)
    assert events[4].tool_call.name == "x"


def test_abort_mid_stream_ends_with_an_aborted_message():
    provider = ScriptedProvider(
        Script.model_validate({"responses": [{"text": "abcdefgh", "tool_calls": [{"name": "x"}]}]}),
        chunk_chars=3,
    )
    controller = AbortController()
    events = []
    for event in provider.stream(_request(), controller.signal):
        events.append(event)
        if isinstance(event, TextDelta):
            controller.abort()
    assert [type(e) for e in events] == [TextDelta, StreamError]
    final = events[-1]
    assert isinstance(final, StreamError)
    assert final.reason == "aborted"
    message = final.message
    assert message.stop_reason == "aborted"
    assert message.error_message == "Request was aborted"
    assert [to_json(block) for block in message.content] == [{"type": "text", "text": "abc"}]
    assert message.usage.total_tokens == 0


def test_complete_returns_the_aborted_message():
    controller = AbortController()
    controller.abort()
    message = _provider(responses=[{"text": "never"}]).complete(_request(), controller.signal)
    assert message.stop_reason == "aborted"
    assert message.content == []


def test_scripted_error_response():
    provider = _provider(responses=[{"text": "", "stop_reason": "error", "error_message": "boom"}])
    events = list(provider.stream(_request(), _signal()))
    final = events[-1]
    assert isinstance(final, StreamError)
    assert final.reason == "error"
    assert final.message.error_message == "boom"


def test_usage_is_estimated_and_overridable():
    provider = _provider(
        responses=[
            {"text": "12345678"},
            {"text": "x", "usage": {"input": 1000, "cacheRead": 50, "cost": {"input": 0.5}}},
        ]
    )
    request = _request("hello")
    first = provider.complete(request, _signal()).usage
    assert first.input == math.ceil(len("sys" + "hello") / 4)
    assert first.output == 2
    assert first.total_tokens == first.input + first.output
    second = provider.complete(request, _signal()).usage
    assert (second.input, second.cache_read, second.output) == (1000, 50, 1)
    assert second.total_tokens == 1051
    assert second.cost.input == 0.5
    assert second.cost.total == 0.5


def test_usage_event_precedes_done():
    events = list(_provider(responses=[{"text": "hi"}]).stream(_request(), _signal()))
    usage, done = events[-2:]
    assert isinstance(usage, UsageUpdate)
    assert isinstance(done, StreamDone)
    assert done.message.usage == usage.usage


def test_summaries_are_consumed_when_given():
    provider = _provider(responses=[{"text": "turn"}], summaries=["S1"])
    summary = provider.complete(_request(purpose="compaction"), _signal())
    assert summary.content[0].text == "S1"
    assert summary.stop_reason == "stop"
    # Summaries do not consume turn responses.
    assert provider.complete(_request(), _signal()).content[0].text == "turn"
    with pytest.raises(ScriptExhaustedError, match=r"call 3 \(purpose branch_summary\)"):
        provider.stream(_request(purpose="branch_summary"), _signal())


def test_without_summaries_a_digest_of_the_input_is_returned():
    conversation = (
        "<conversation>\n[User]: Fix the flaky test in tests/test_io.py\n\n"
        '[Assistant]: Looking at it.\n\n[Assistant tool calls]: read(path="tests/test_io.py")'
        "\n\n[Tool result]: line one\n\nline three\n\n[Assistant]: Found a race.\n"
        "</conversation>\n\nSummarize."
    )
    provider = _provider()
    first = provider.complete(_request(conversation, "branch_summary"), _signal())
    again = provider.complete(_request(conversation, "branch_summary"), _signal())
    text = first.content[0].text
    assert text == again.content[0].text
    assert text.startswith("## Goal\nFix the flaky test in tests/test_io.py\n")
    assert "- [Assistant]: Found a race." in text
    assert "- [Tool result]: line one line three" in text
    assert "Digest of 5 conversation entries" in text


def _write(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "script.json"
    path.write_text(content)
    return path


def test_load_script_reads_a_file(tmp_path):
    path = _write(tmp_path, json.dumps({"responses": [{"text": "hi"}], "model": "m-1"}))
    provider = ScriptedProvider.from_file(path)
    assert provider.info.id == "m-1"
    assert provider.complete(_request(), _signal()).model == "m-1"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid script"),
        ('{"responses": [{"tool_calls": [{"arguments": {}}]}]}', "responses.0.tool_calls.0.name"),
        ('{"responses": [{"txt": "typo"}]}', "responses.0.txt: Extra inputs are not permitted"),
        ('{"responses": [{"stop_reason": "halt"}]}', "responses.0.stop_reason"),
        ('{"responses": {}}', "responses"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path, content, expected):
    with pytest.raises(ScriptError) as caught:
        load_script(_write(tmp_path, content))
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(ScriptError, match="cannot read script"):
        load_script(tmp_path / "absent.json")


def _oracle_cases() -> Path | None:
    root = oracle_dir()
    return None if root is None else root / "cases"


@pytest.mark.pi
def test_assistant_message_keys_follow_pi_oracle():
    cases = _oracle_cases()
    if cases is None:
        pytest.skip("needs the Pi oracle corpus (set PI_ORACLE_DIR)")
    pi_message = None
    for path in sorted(cases.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            message = record.get("message") if record.get("type") == "message" else None
            if message and message.get("stopReason") == "toolUse" and "errorMessage" not in message:
                kinds = [block["type"] for block in message["content"]]
                if kinds[:2] == ["thinking", "text"] and "toolCall" in kinds:
                    pi_message = message
                    break
        if pi_message:
            break
    assert pi_message is not None, "no tool-using assistant message in the oracle corpus"
    ours = to_json(
        _provider(
            responses=[{"thinking": "t", "text": "x", "tool_calls": [{"name": "read"}]}]
        ).complete(_request(), _signal())
    )
    assert list(ours) == list(pi_message)
    assert list(ours["usage"]) == list(pi_message["usage"])
    assert list(ours["usage"]["cost"]) == list(pi_message["usage"]["cost"])
    pi_blocks = {block["type"]: list(block) for block in pi_message["content"]}
    for block in ours["content"]:
        assert list(block) == pi_blocks[block["type"]]


def _after_tool_result(text: str) -> ModelRequest:
    result = ToolResultMessage(
        tool_call_id="c",
        tool_name="t",
        content=[TextContent(text=text)],
        is_error=False,
        timestamp=1,
    )
    request = _request()
    request.messages.append(result)
    return request


def test_tool_arguments_can_name_values_of_the_newest_json_output():
    provider = _provider(
        responses=[
            {
                "tool_calls": [
                    {
                        "name": "read_item",
                        "arguments": {
                            "window_id": "{{out:items.0.window_id}}",
                            "count": "{{out:total}}",
                            "label": "item {{out:items.0.item_id}} of {{out:total}}",
                        },
                    }
                ]
            }
        ]
    )
    output = {"items": [{"window_id": "w-9", "item_id": "i-3"}], "total": 2}
    message = provider.complete(_after_tool_result(json.dumps(output)), _signal())
    assert message.content[0].arguments == {
        "window_id": "w-9",
        "count": 2,
        "label": "item i-3 of 2",
    }


def test_a_reference_to_nothing_is_a_script_error():
    provider = _provider(
        responses=[{"tool_calls": [{"name": "t", "arguments": {"id": "{{out:items.5.id}}"}}]}]
    )
    with pytest.raises(ScriptError, match=r"\{\{out:items.5.id\}\} names nothing"):
        provider.complete(_after_tool_result('{"items": []}'), _signal())
