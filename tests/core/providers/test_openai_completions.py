"""The Chat Completions codec on what the shared Pi cases do not cover: ctxmodes' developer
messages, namespaces, server quirks and chunk shapes."""

from __future__ import annotations

from typing import Any

from ctxmodes.providers.apis import capabilities_for
from ctxmodes.providers.apis.openai_completions.compat import resolve_compat
from ctxmodes.providers.apis.openai_completions.request import build_body, convert_messages
from ctxmodes.providers.apis.openai_completions.stream import CompletionsStream
from ctxmodes.providers.catalog import ModelSpec
from ctxmodes.providers.wire import WireEvent, new_output


def _model(**overrides: Any) -> ModelSpec:
    data = {
        "id": "qwen3",
        "api": "openai-completions",
        "provider": "ollama",
        "baseUrl": "http://127.0.0.1:11434/v1",
        "reasoning": True,
        **overrides,
    }
    return ModelSpec.model_validate(data)


def _developer(text: str) -> dict[str, Any]:
    return {"role": "developer", "content": [{"type": "text", "text": text}]}


def test_developer_messages_become_system_messages_where_the_server_has_no_developer_role() -> None:
    model = _model(compat={"supportsDeveloperRole": False})
    messages = [_developer("window 2"), {"role": "user", "content": "go", "timestamp": 1}]
    sent = convert_messages(model, "Be brief.", messages, resolve_compat(model), lambda: 0)
    assert sent == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "window 2"},
        {"role": "user", "content": "go"},
    ]
    assert capabilities_for(model).developer_role is False


def test_developer_role_is_kept_where_the_server_has_it() -> None:
    model = _model()
    sent = convert_messages(model, None, [_developer("window 2")], resolve_compat(model), lambda: 0)
    assert sent == [{"role": "developer", "content": "window 2"}]
    assert capabilities_for(model).developer_role is True


def test_known_hosts_switch_quirks_and_the_model_compat_overrides_them() -> None:
    deepseek = resolve_compat(_model(provider="deepseek", baseUrl="https://api.deepseek.com/v1"))
    assert deepseek["supportsDeveloperRole"] is False
    assert deepseek["maxTokensField"] == "max_tokens"
    assert deepseek["thinkingFormat"] == "deepseek"
    overridden = resolve_compat(
        _model(
            provider="deepseek", baseUrl="https://api.deepseek.com", compat={"supportsStore": True}
        )
    )
    assert overridden["supportsStore"] is True


def test_namespaced_tools_are_offered_as_plain_functions() -> None:
    model = _model()
    tools = [
        {
            "name": "history",
            "description": "History",
            "tools": [{"name": "history_search", "description": "Search", "parameters": {}}],
        },
        {"name": "notes_read", "description": "Read", "parameters": {}},
    ]
    body = build_body(
        model,
        None,
        [{"role": "user", "content": "hi", "timestamp": 1}],
        tools,
        compat=resolve_compat(model),
        retention="short",
        session_id="s",
        max_tokens=100,
        temperature=None,
        tool_choice=None,
        effort="high",
        sampling_params=None,
        now_ms=lambda: 0,
    )
    assert [tool["function"]["name"] for tool in body["tools"]] == ["history_search", "notes_read"]
    assert body["reasoning_effort"] == "high"
    assert "prompt_cache_key" not in body  # only api.openai.com gets one


def _read(chunks: list[dict[str, Any]]) -> tuple[dict[str, Any], list[WireEvent]]:
    model = _model()
    output = new_output(model, "openai-completions", 0)
    events: list[WireEvent] = []
    reader = CompletionsStream(model, output, events.append)
    for chunk in chunks:
        reader.feed(chunk)
    reader.finish()
    return output, events


def test_tool_calls_matched_by_id_when_a_server_omits_the_index() -> None:
    first = {"id": "call_1", "function": {"name": "read", "arguments": '{"pa'}}
    second = {"id": "call_1", "function": {"arguments": 'th":"a"}'}}
    output, events = _read(
        [
            {"id": "c1", "choices": [{"delta": {"tool_calls": [first]}}]},
            {
                "id": "c1",
                "choices": [{"delta": {"tool_calls": [second]}, "finish_reason": "tool_calls"}],
            },
        ]
    )
    assert output["content"] == [
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "a"}}
    ]
    assert [event.type for event in events] == [
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
    ]
    assert output["stopReason"] == "toolUse"


def test_typed_content_parts_split_into_thinking_and_text() -> None:
    parts = [
        {"type": "thinking", "thinking": [{"type": "text", "text": "17*23 is 391"}]},
        {"type": "text", "text": "391"},
    ]
    output, _ = _read(
        [{"id": "c", "choices": [{"delta": {"content": parts}, "finish_reason": "stop"}]}]
    )
    assert output["content"] == [
        {"type": "thinking", "thinking": "17*23 is 391"},
        {"type": "text", "text": "391"},
    ]


def test_usage_total_is_recomputed_and_cached_tokens_are_cache_reads() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "total_tokens": 999,
        "prompt_tokens_details": {"cached_tokens": 60},
    }
    output, _ = _read([{"id": "c", "choices": [], "usage": usage}])
    assert output["usage"]["input"] == 40
    assert output["usage"]["cacheRead"] == 60
    assert output["usage"]["totalTokens"] == 105
