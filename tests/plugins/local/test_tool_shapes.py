"""The context tools at the provider boundary: flat ``history``/``notes`` routers on the Codex
transport, plaintext namespaces on other Responses transports, and namespaced calls routed to
the flat tools when persisted and restored when replayed."""

from __future__ import annotations

from support.local_rig import call, message_text, text, tool_results

from ctxmodes.providers.base import NamespaceToolSchema, ToolSchema
from ctxmodes.session.models import AssistantMessage, MessageEntry, ToolCall
from ctxmodes.windows.note_entries import NOTE_CUSTOM_TYPE
from ctxmodes.windows.tools import (
    GET_CONTEXT_REMAINING,
    HISTORY_ACTIONS,
    NEW_CONTEXT,
    NOTES_ACTIONS,
    flat_router,
    namespace_tool,
)


def tools_by_name(request) -> dict[str, ToolSchema | NamespaceToolSchema]:
    return {tool.name: tool for tool in request.tools}


def persisted_calls(h) -> list[ToolCall]:
    return [
        block
        for entry in h.entries()
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
        for block in entry.message.content
        if isinstance(block, ToolCall)
    ]


def sent_calls(request) -> list[ToolCall]:
    return [
        block
        for message in request.messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, ToolCall)
    ]


def test_codex_gets_the_flat_routers(local_over) -> None:
    h = local_over("codex", [text("ok")])
    h.prompt("hello")
    (request,) = h.requests()
    tools = tools_by_name(request)
    for family, actions in (("history", HISTORY_ACTIONS), ("notes", NOTES_ACTIONS)):
        router = tools[family]
        assert isinstance(router, ToolSchema)
        assert router.parameters == flat_router(family).parameters
        assert router.parameters["properties"]["action"] == {
            "type": "string",
            "enum": list(actions),
        }
        assert router.parameters["required"] == ["action"]
        assert router.parameters["additionalProperties"] is False
    assert not any(isinstance(tool, NamespaceToolSchema) for tool in request.tools)


def test_responses_gets_plaintext_namespaces(local_over) -> None:
    h = local_over("responses", [text("ok")])
    h.prompt("hello")
    (request,) = h.requests()
    tools = tools_by_name(request)
    for family in ("history", "notes"):
        namespace = tools[family]
        assert isinstance(namespace, NamespaceToolSchema)
        spec = namespace_tool(family)
        assert namespace.description == spec["description"]
        assert [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in namespace.tools
        ] == [
            {"name": f["name"], "description": f["description"], "parameters": f["parameters"]}
            for f in spec["tools"]
        ]
        for function in namespace.tools:
            assert "encrypted" not in str(function.parameters), "plaintext, not Remote's shape"
    for plain in (NEW_CONTEXT, GET_CONTEXT_REMAINING):
        assert tools[plain.name] == ToolSchema(
            name=plain.name, description=plain.description, parameters=plain.parameters
        )


def test_namespaced_calls_are_routed_then_replayed_as_namespaced(local_over) -> None:
    h = local_over(
        "responses",
        [
            call("write_file", namespace="notes", path="found.md", text="the needle is here"),
            call("search_contents", namespace="history", query="needle"),
            text("done"),
        ],
    )
    h.prompt("find the needle")
    stored = persisted_calls(h)
    assert [(c.name, c.namespace, c.arguments) for c in stored] == [
        (
            "notes",
            "notes",
            {"action": "write_file", "path": "found.md", "text": "the needle is here"},
        ),
        ("history", "history", {"action": "search_contents", "query": "needle"}),
    ]
    # The flat tools ran them.
    notes, history = tool_results(h)
    assert (notes.tool_name, notes.is_error) == ("notes", False)
    assert (history.tool_name, history.is_error) == ("history", False)
    assert '"truncated_content":"find the needle"' in message_text(history)
    (note,) = h.custom_entries(NOTE_CUSTOM_TYPE)
    assert note.data["path"] == "/root/notes/found.md"
    # Replayed to the namespace transport in the model's own shape.
    replayed = sent_calls(h.requests()[-1])
    assert [(c.name, c.namespace, c.arguments) for c in replayed] == [
        ("write_file", "notes", {"path": "found.md", "text": "the needle is here"}),
        ("search_contents", "history", {"query": "needle"}),
    ]


def test_codex_replays_routed_calls_flat(local_over) -> None:
    h = local_over(
        "codex",
        [call("search_contents", namespace="history", query="needle"), text("done")],
    )
    h.prompt("find the needle")
    (stored,) = persisted_calls(h)
    (replayed,) = sent_calls(h.requests()[-1])
    assert replayed == stored
    assert (replayed.name, replayed.arguments["action"]) == ("history", "search_contents")
