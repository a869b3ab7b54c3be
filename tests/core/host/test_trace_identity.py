"""``--trace`` shows a request's own headers and client metadata when a mode set them, and
an encrypted tool output as the ciphertext it carries."""

from __future__ import annotations

from ctxmodes.host.trace import request_json
from ctxmodes.providers.base import EncryptedToolOutput, ModelRequest


def test_plain_requests_trace_no_identity_keys():
    traced = request_json(ModelRequest(system_prompt="s", messages=[]), "scripted")
    assert "headers" not in traced
    assert "client_metadata" not in traced


def test_identity_and_encrypted_outputs_are_traced_as_sent():
    output = EncryptedToolOutput(tool_call_id="c1", tool_name="notes", encrypted_content="gAAA")
    request = ModelRequest(
        system_prompt="s",
        messages=[output],
        headers={"x-codex-window-id": "s:1"},
        client_metadata={"x-codex-window-id": "s:1"},
    )
    traced = request_json(request, "openai-codex-responses")
    assert traced["headers"] == {"x-codex-window-id": "s:1"}
    assert traced["client_metadata"] == {"x-codex-window-id": "s:1"}
    assert traced["messages"] == [
        {
            "role": "encryptedToolOutput",
            "toolCallId": "c1",
            "toolName": "notes",
            "encryptedContent": "gAAA",
        }
    ]
