import pytest

from ctxmodes.session.models import AssistantMessage, Cost, TextContent, ToolCall, Usage
from ctxmodes.windows.routing import (
    is_routed,
    route_message,
    route_tool_call,
    unroute_message,
    unroute_tool_call,
)


def call(name, arguments, namespace=None):
    return ToolCall(id="c", name=name, arguments=arguments, namespace=namespace)


def test_namespaced_call_routes_to_the_flat_router():
    routed = route_tool_call(call("write_file", {"path": "p", "text": "t"}, "notes"))
    assert routed.name == "notes"
    assert routed.namespace == "notes"
    assert list(routed.arguments.items()) == [
        ("action", "write_file"),
        ("path", "p"),
        ("text", "t"),
    ]
    assert is_routed(routed)


def test_the_operation_name_wins_over_an_action_argument():
    routed = route_tool_call(call("list_windows", {"action": "read_item"}, "history"))
    assert routed.arguments == {"action": "list_windows"}


@pytest.mark.parametrize(
    "original",
    [
        call("bash", {"command": "ls"}),
        call("erase", {}, "notes"),
        call("write_file", {}, "files"),
        call("history", {"action": "list_windows"}),
    ],
)
def test_other_calls_pass_through(original):
    assert route_tool_call(original) is original
    assert unroute_tool_call(original) is original


def test_replay_unroutes():
    original = call("search_contents", {"query": "q", "limit": 3}, "history")
    restored = unroute_tool_call(route_tool_call(original))
    assert restored == original


def test_flat_router_calls_are_not_unrouted():
    flat = call("history", {"action": "list_windows"})
    assert not is_routed(flat)
    unknown = call("history", {"action": "nope"}, "history")
    assert unroute_tool_call(unknown) is unknown


def test_messages():
    usage = Usage(
        input=0,
        output=0,
        cache_read=0,
        cache_write=0,
        total_tokens=0,
        cost=Cost(input=0, output=0, cache_read=0, cache_write=0, total=0),
    )
    message = AssistantMessage(
        content=[TextContent(text="hi"), call("read_file", {"path": "p"}, "notes")],
        api="a",
        provider="p",
        model="m",
        usage=usage,
        stop_reason="toolUse",
        timestamp=1,
    )
    routed = route_message(message)
    assert routed.content[0] is message.content[0]
    assert routed.content[1].name == "notes"
    assert unroute_message(routed) == message
    plain = message.model_copy(update={"content": [TextContent(text="x")]})
    assert route_message(plain) is plain
