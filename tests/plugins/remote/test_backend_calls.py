"""Remote's history and notes calls, end to end: the model's namespaced call, the request the
backend receives, the result the session keeps, and what the model is sent next — over real
loopback sockets and in process alike."""

from __future__ import annotations

import orjson
from support.local_rig import call, file_bytes, text, tool_results

from ctxmodes.providers.base import EncryptedToolOutput, NamespaceToolSchema, ToolSchema
from ctxmodes.session.models import AssistantMessage, ToolCall

NOTE = "checkpoint: migrate the ledger, step 3 of 7 done; secret sauce is cumin-5521"
QUERY = "cumin-5521"


def test_a_note_write_reaches_the_backend_as_the_model_sent_it(remote, emulator, account, wire):
    ciphertext = emulator.encrypt(account, NOTE)
    h = remote(
        [call("write_file", "notes", path="checkpoint.md", text=ciphertext), text("saved")],
        wire=wire,
    )
    h.prompt("remember the plan")

    (write,) = [c for c in emulator.calls if c.path.endswith("/write_file")]
    assert write.path == "/backend-api/codex/alpha/notes/v2/write_file"
    assert write.headers["x-openai-encrypted-tool-arguments"] == "true"
    assert orjson.loads(write.headers["x-openai-tool-output-truncation-policy"]) == {
        "mode": "tokens",
        "limit": 10000,
    }
    assert write.headers["authorization"] == f"Bearer {account.token}"
    assert write.headers["chatgpt-account-id"] == account.account_id
    session_id = h.manager.session_id
    # Ciphertext stays ciphertext; the context comes last and names this session.
    assert list(write.body) == ["path", "text", "context"]
    assert write.body["text"] == ciphertext
    assert write.body["context"] == {"session_id": session_id, "current_agent_name": "/root"}


def test_the_encrypted_answer_is_persisted_and_replayed_as_encrypted_content(
    remote, emulator, account, wire
):
    h = remote(
        [
            call("write_file", "notes", path="checkpoint.md", text=emulator.encrypt(account, NOTE)),
            text("saved"),
        ],
        wire=wire,
    )
    h.prompt("remember the plan")

    (result,) = tool_results(h, "notes")
    assert result.is_error is False
    assert [block.text for block in result.content] == ["notes operation completed"]
    encrypted = result.details["codexHistoryNotes"]["encrypted_output"]
    assert list(result.details["codexHistoryNotes"]) == ["encrypted_output"]
    written = emulator.decrypt_json(account, encrypted)
    assert written["file"]["path"] == "/root/notes/checkpoint.md"

    # The persisted call is the flat router form; the model is sent back its own call and
    # the ciphertext as the call's output.
    second = h.requests()[1]
    calls = [
        block
        for message in second.messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, ToolCall)
    ]
    assert [(c.namespace, c.name) for c in calls] == [("notes", "write_file")]
    assert "action" not in calls[0].arguments
    (output,) = [m for m in second.messages if isinstance(m, EncryptedToolOutput)]
    assert output.tool_call_id == calls[0].id
    assert output.output_items() == [{"type": "encrypted_content", "encrypted_content": encrypted}]


def test_the_session_file_holds_no_plaintext_of_notes_or_queries(remote, emulator, account):
    h = remote(
        [
            call("write_file", "notes", path="plan.md", text=emulator.encrypt(account, NOTE)),
            call("search_contents", "notes", query=emulator.encrypt(account, QUERY)),
            call("search_contents", "history", query=emulator.encrypt(account, QUERY)),
            call("read_file", "notes", path="plan.md"),
            text("done"),
        ]
    )
    h.prompt("work")

    found = [
        emulator.decrypt_json(account, r.details["codexHistoryNotes"]["encrypted_output"])
        for r in tool_results(h)
        if r.tool_name in ("notes", "history")
    ]
    # The backend did find the note by the query, and read it back...
    assert found[1]["files"][0]["matches"][0]["line"] == NOTE
    assert found[3]["file"]["content"] == NOTE
    # ...yet neither the note nor the query is anywhere in the session file.
    data = file_bytes(h)
    assert b"cumin" not in data
    assert b"ledger" not in data


def test_the_model_gets_the_native_encrypted_namespaces(remote):
    h = remote([text("hello")])
    h.prompt("hi")
    (request,) = h.requests()
    tools = {tool.name: tool for tool in request.tools}
    assert isinstance(tools["new_context"], ToolSchema)
    assert isinstance(tools["get_context_remaining"], ToolSchema)
    history, notes = tools["history"], tools["notes"]
    assert isinstance(history, NamespaceToolSchema)
    assert isinstance(notes, NamespaceToolSchema)
    assert [t.name for t in history.tools] == [
        "list_items",
        "list_windows",
        "read_item",
        "search_contents",
    ]
    assert [t.name for t in notes.tools] == [
        "append_to_file",
        "list_files_by_prefix",
        "read_file",
        "search_contents",
        "write_file",
    ]
    encrypted = {
        (namespace.name, tool.name, field)
        for namespace in (history, notes)
        for tool in namespace.tools
        for field, schema in tool.parameters["properties"].items()
        if schema.get("encrypted") is True
    }
    assert encrypted == {
        ("history", "search_contents", "query"),
        ("notes", "search_contents", "query"),
        ("notes", "append_to_file", "text"),
        ("notes", "write_file", "text"),
    }
    for namespace in (history, notes):
        for tool in namespace.tools:
            assert "additionalProperties" not in tool.parameters
            assert "minimum" not in orjson.dumps(tool.parameters).decode()
    write = next(t for t in notes.tools if t.name == "write_file")
    assert write.parameters["required"] == ["text", "path"]


def test_a_model_supplied_context_is_overwritten(remote, emulator, account):
    spoof = {"session_id": "someone-else", "current_agent_name": "/evil"}
    h = remote([call("list_windows", "history", context=spoof, limit=3), text("ok")])
    h.prompt("look")
    (listing,) = [c for c in emulator.calls if c.path.endswith("/list_windows")]
    assert listing.body == {
        "limit": 3,
        "context": {"session_id": h.manager.session_id, "current_agent_name": "/root"},
    }
    assert "x-openai-encrypted-tool-arguments" not in listing.headers


def test_an_unknown_operation_is_refused_without_a_request(remote, emulator):
    h = remote([call("notes", action="delete_everything", path="x"), text("ok")])
    h.prompt("go")
    (result,) = tool_results(h, "notes")
    assert result.is_error
    assert result.content[0].text == "notes requires a supported action"
    assert not [c for c in emulator.calls if "delete" in c.path]


def test_images_from_the_backend_become_image_blocks(remote, emulator, account):
    encrypted = emulator.encrypt(account, "{}")
    body = orjson.dumps(
        {
            "encrypted_output": encrypted,
            "images": [{"data": "iVBORw0KGgo=", "mime_type": "image/png", "detail": "auto"}],
        }
    )
    emulator.fail_with_body(body)
    h = remote([call("read_item", "history", window_id="w", item_id="i"), text("seen")])
    h.prompt("show")
    (result,) = tool_results(h, "history")
    assert [block.type for block in result.content] == ["text", "image"]
    assert result.details == {"codexHistoryNotes": {"encrypted_output": encrypted}}
    (output,) = [m for m in h.requests()[1].messages if isinstance(m, EncryptedToolOutput)]
    assert output.output_items()[1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,iVBORw0KGgo=",
    }
