import pytest

from ctxmodes.windows.tool_args import (
    ToolArgumentError,
    integer_argument,
    optional_integer,
    validate_action,
    validate_call,
)
from ctxmodes.windows.tools import (
    GET_CONTEXT_REMAINING,
    HISTORY_ACTIONS,
    NEW_CONTEXT,
    NOTES_ACTIONS,
    OPERATIONS,
    flat_router,
    namespace_tool,
)

# The field set of every operation, as the shared contract lists them.
CONTRACT_FIELDS = {
    ("history", "list_windows"): {"agent_name", "limit", "recent_first"},
    ("history", "list_items"): {
        "agent_name",
        "limit",
        "max_chars_per_item",
        "recent_first",
        "role",
        "tool_name",
        "tool_namespace",
        "window_id",
    },
    ("history", "read_item"): {"agent_name", "item_id", "limit_chars", "offset_chars", "window_id"},
    ("history", "search_contents"): {
        "agent_name",
        "limit",
        "query",
        "recent_first",
        "role",
        "tool_name",
        "tool_namespace",
        "window_id",
    },
    ("notes", "list_files_by_prefix"): {"file_order", "file_order_by", "max_results", "prefix"},
    ("notes", "read_file"): {"path", "start_line", "stop_line"},
    ("notes", "search_contents"): {
        "max_files",
        "max_matches_per_file",
        "path_prefix",
        "query",
        "recent_file_first",
    },
    ("notes", "append_to_file"): {"path", "text"},
    ("notes", "write_file"): {"path", "text"},
}


def test_operation_table_matches_the_contract():
    assert tuple(OPERATIONS["history"]) == HISTORY_ACTIONS
    assert tuple(OPERATIONS["notes"]) == NOTES_ACTIONS
    for (family, action), fields in CONTRACT_FIELDS.items():
        assert set(OPERATIONS[family][action].fields) == fields


def test_parameterless_tools():
    for tool in (NEW_CONTEXT, GET_CONTEXT_REMAINING):
        assert tool.parameters == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
    assert NEW_CONTEXT.name == "new_context"
    assert GET_CONTEXT_REMAINING.name == "get_context_remaining"
    assert NEW_CONTEXT.as_responses_tool()["strict"] is False


@pytest.mark.parametrize("family", ["history", "notes"])
def test_flat_router_shape(family):
    router = flat_router(family)
    assert router.name == family
    params = router.parameters
    assert params["additionalProperties"] is False
    assert params["required"] == ["action"]
    actions = HISTORY_ACTIONS if family == "history" else NOTES_ACTIONS
    assert params["properties"]["action"] == {"type": "string", "enum": list(actions)}
    union = set().union(*(f for (fam, _), f in CONTRACT_FIELDS.items() if fam == family))
    assert set(params["properties"]) == union | {"action"}


def test_flat_history_schema_details():
    props = flat_router("history").parameters["properties"]
    assert props["limit"]["minimum"] == 1
    assert props["offset_chars"]["minimum"] == 0
    assert props["role"]["anyOf"][0]["enum"] == ["user", "assistant", "tool", "system", "developer"]
    assert {"type": "null"} in props["window_id"]["anyOf"]


@pytest.mark.parametrize("family", ["history", "notes"])
def test_plaintext_namespace_shape(family):
    namespace = namespace_tool(family)
    assert namespace["type"] == "namespace"
    assert namespace["name"] == family
    assert [tool["name"] for tool in namespace["tools"]] == list(OPERATIONS[family])
    for tool in namespace["tools"]:
        assert tool["type"] == "function"
        assert tool["strict"] is False
        assert tool["parameters"]["additionalProperties"] is False
        assert set(tool["parameters"]["properties"]) == CONTRACT_FIELDS[(family, tool["name"])]
        assert all("encrypted" not in p for p in tool["parameters"]["properties"].values())


def test_required_fields_per_operation():
    tools = {t["name"]: t for t in namespace_tool("history")["tools"]}
    assert tools["read_item"]["parameters"]["required"] == ["item_id", "window_id"]
    assert tools["read_item"]["parameters"]["properties"]["window_id"]["type"] == "string"
    assert "required" not in tools["list_windows"]["parameters"]
    notes = {t["name"]: t for t in namespace_tool("notes")["tools"]}
    assert notes["write_file"]["parameters"]["required"] == ["path", "text"]


def test_encrypted_namespaces_match_the_native_service():
    for family, encrypted_fields in (
        ("history", {("search_contents", "query")}),
        (
            "notes",
            {("search_contents", "query"), ("append_to_file", "text"), ("write_file", "text")},
        ),
    ):
        for tool in namespace_tool(family, encrypted=True)["tools"]:
            params = tool["parameters"]
            assert "additionalProperties" not in params
            for field, schema in params["properties"].items():
                assert "minimum" not in schema
                assert schema.get("encrypted", False) is ((tool["name"], field) in encrypted_fields)


@pytest.mark.parametrize(
    ("family", "arguments", "message"),
    [
        ("history", {}, "history requires a supported action"),
        ("history", {"action": "delete"}, "history requires a supported action"),
        ("notes", {"action": 3}, "notes requires a supported action"),
        (
            "history",
            {"action": "list_windows", "query": "x"},
            "history list_windows does not accept query",
        ),
        (
            "notes",
            {"action": "read_file", "path": "a", "text": "x"},
            "notes read_file does not accept text",
        ),
        (
            "history",
            {"action": "read_item", "window_id": "w"},
            "history read_item requires item_id",
        ),
        (
            "history",
            {"action": "read_item", "item_id": "i"},
            "history read_item requires window_id",
        ),
        ("history", {"action": "read_item"}, "history read_item requires item_id"),
        (
            "history",
            {"action": "search_contents", "query": ""},
            "history search_contents requires query",
        ),
        ("notes", {"action": "search_contents"}, "notes search_contents requires query"),
        ("notes", {"action": "read_file", "path": ""}, "notes read_file requires path"),
        ("notes", {"action": "write_file"}, "notes write_file requires path"),
        ("notes", {"action": "write_file", "path": "p"}, "notes write_file requires text"),
        (
            "notes",
            {"action": "append_to_file", "path": "p", "text": 1},
            "notes append_to_file requires text",
        ),
        (
            "notes",
            {"action": "append_to_file", "path": 7, "text": "x"},
            "notes append_to_file requires path",
        ),
    ],
)
def test_validation_messages(family, arguments, message):
    with pytest.raises(ToolArgumentError) as caught:
        validate_call(family, arguments)
    assert str(caught.value) == message


def test_valid_calls():
    call = validate_call("notes", {"action": "write_file", "path": "p", "text": ""})
    assert (call.family, call.action, call.arguments) == (
        "notes",
        "write_file",
        {"path": "p", "text": ""},
    )
    call = validate_action("history", "list_items", {"role": None, "limit": "many"})
    assert call.arguments == {"role": None, "limit": "many"}


def test_lenient_integers():
    assert integer_argument(5, 1) == 5
    assert integer_argument(5.0, 1) == 5
    assert integer_argument(5.5, 1) == 1
    assert integer_argument("5", 1) == 1
    assert integer_argument(True, 1) == 1
    assert integer_argument(None, 1) == 1
    assert optional_integer(None) is None
    assert optional_integer(0) is None
    assert optional_integer(-2) == -2


def test_new_context_outcomes():
    from ctxmodes.windows.tools import new_context_outcome

    started = new_context_outcome(started=True)
    assert started.message == (
        "A new context window will start without summarizing conversation history."
    )
    assert started.details == {"started": True}
    assert not started.terminate
    pending = new_context_outcome(started=False, terminate=True)
    assert pending.message == "A new context window is already scheduled."
    assert pending.details == {"started": False}
    assert pending.terminate


def test_the_managed_mode_cannot_be_subclassed():
    # A subclass could override a hook without marking it again, silently dropping it.
    import pytest

    from ctxmodes.windows import ManagedMode

    with pytest.raises(TypeError, match="ManagedMode is not subclassed"):
        type("Dropping", (ManagedMode,), {})
