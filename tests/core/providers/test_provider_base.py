from __future__ import annotations

from ctxmodes.providers.base import ModelRequest, ToolSchema
from ctxmodes.session.models import AssistantMessage, ToolResultMessage, UserMessage
from ctxmodes.tools.files import ReadTool


def test_tool_schema_from_tool():
    schema = ToolSchema.from_tool(ReadTool())
    assert schema.name == "read"
    assert schema.description == ReadTool.description
    assert schema.parameters["required"] == ["path"]


def test_model_request_accepts_stored_messages_and_defaults():
    request = ModelRequest.model_validate(
        {
            "system_prompt": "sys",
            "messages": [
                {"role": "user", "content": "hi", "timestamp": 1},
                {
                    "role": "assistant",
                    "content": [{"type": "toolCall", "id": "c", "name": "read", "arguments": {}}],
                    "api": "a",
                    "provider": "p",
                    "model": "m",
                    "usage": {
                        "input": 0,
                        "output": 0,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 0,
                        "cost": {
                            "input": 0,
                            "output": 0,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "total": 0,
                        },
                    },
                    "stopReason": "toolUse",
                    "timestamp": 2,
                },
                {
                    "role": "toolResult",
                    "toolCallId": "c",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "x"}],
                    "isError": False,
                    "timestamp": 3,
                },
            ],
        }
    )
    assert [type(m) for m in request.messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
    ]
    assert request.tools == []
    assert request.purpose == "turn"
    assert request.max_tokens is None
