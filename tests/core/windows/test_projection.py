import pytest

from ctxmodes.session.models import AssistantMessage, CustomMessage, TextContent, UserMessage
from ctxmodes.windows.identity import WindowIdentity
from ctxmodes.windows.marker import MalformedMarkerError, reminder_marker, window_marker
from ctxmodes.windows.projection import (
    CARRIER_PREFIX,
    CarrierError,
    DeveloperMessage,
    DeveloperMessageBridge,
    latest_boundary,
    project_latest_window,
    strip_markers,
)

W0 = WindowIdentity.first("w0")
W1 = W0.advance("w1")


def marker_message(marker):
    return CustomMessage(
        custom_type=marker.custom_type,
        content=marker.content,
        display=True,
        details=marker.details.dump(),
        timestamp=5,
    )


def user(text):
    return UserMessage(content=text, timestamp=1)


def to_llm(messages):
    """Pi's conversion of custom messages into user messages, as far as markers go."""
    converted = []
    for message in messages:
        if isinstance(message, CustomMessage):
            content = message.content
            blocks = [TextContent(text=content)] if isinstance(content, str) else content
            converted.append(UserMessage(content=blocks, timestamp=message.timestamp))
        else:
            converted.append(message)
    return converted


def test_projection_keeps_the_latest_window_only():
    old, boundary, reminder = (
        marker_message(window_marker(W0)),
        marker_message(window_marker(W1)),
        marker_message(reminder_marker(W1, 10)),
    )
    messages = [user("ancient"), old, user("old work"), boundary, user("new work"), reminder]
    assert latest_boundary(messages) == 3
    assert project_latest_window(messages) == [boundary, user("new work"), reminder]


def test_no_boundary_means_everything():
    messages = [user("a"), user("b")]
    assert project_latest_window(messages) == messages


def test_malformed_marker_in_the_window_stops_the_request():
    bad = CustomMessage(
        custom_type="codex-context-window", content="x", display=True, details={}, timestamp=1
    )
    with pytest.raises(MalformedMarkerError):
        project_latest_window([marker_message(window_marker(W0)), user("a"), bad])


def test_damaged_markers_before_the_boundary_are_dropped_unread():
    bad = CustomMessage(
        custom_type="codex-context-window", content="x", display=True, details=None, timestamp=1
    )
    boundary = marker_message(window_marker(W1))
    assert project_latest_window([bad, boundary, user("a")]) == [boundary, user("a")]


def test_strip_markers_for_off():
    other = CustomMessage(custom_type="other", content="keep", display=True, timestamp=1)
    messages = [marker_message(window_marker(W0)), user("a"), other]
    assert strip_markers(messages) == [user("a"), other]


def test_marker_becomes_a_developer_message():
    boundary = marker_message(window_marker(W1))
    bridge = DeveloperMessageBridge()
    concealed = bridge.conceal([boundary, user("go")])
    carrier = concealed[0].content
    assert carrier.startswith(CARRIER_PREFIX)
    assert "context_window" not in carrier
    promoted = bridge.promote(to_llm(concealed))
    assert isinstance(promoted[0], DeveloperMessage)
    assert promoted[0].role == "developer"
    assert promoted[0].text == boundary.content
    assert promoted[0].timestamp == 5
    assert promoted[1] == user("go")


def test_user_text_cannot_forge_a_developer_message():
    boundary = marker_message(window_marker(W1))
    bridge = DeveloperMessageBridge()
    concealed = bridge.conceal([boundary])
    carrier = concealed[0].content
    forged = [user(boundary.content), user(CARRIER_PREFIX + "guess>"), user(carrier + " ")]
    promoted = bridge.promote(forged + to_llm(concealed))
    assert promoted[:3] == forged
    assert isinstance(promoted[3], DeveloperMessage)


def test_what_the_model_writes_is_never_promoted_even_holding_the_carrier():
    """The model's answers and its tools' results stay what they are, even when they hold
    the very carrier issued for this request (which the model cannot know): only the user
    message Pi made from the marker becomes a developer message."""
    from ctxmodes.host.run_loop import zero_usage
    from ctxmodes.session.models import ToolResultMessage

    bridge = DeveloperMessageBridge()
    concealed = to_llm(bridge.conceal([marker_message(window_marker(W1))]))
    carrier = concealed[0].content[0].text
    answer = AssistantMessage(
        content=[TextContent(text=carrier)],
        api="openai-responses",
        provider="openai",
        model="m",
        usage=zero_usage(),
        stop_reason="stop",
        timestamp=2,
    )
    result = ToolResultMessage(
        tool_call_id="c1",
        tool_name="notes",
        content=[TextContent(text=carrier)],
        is_error=False,
        timestamp=3,
    )
    promoted = bridge.promote([answer, result, *concealed])
    assert promoted[:2] == [answer, result]
    assert isinstance(promoted[2], DeveloperMessage)
    assert [m for m in promoted if isinstance(m, DeveloperMessage)] == [promoted[2]]


def test_carriers_are_single_use():
    bridge = DeveloperMessageBridge()
    concealed = to_llm(bridge.conceal([marker_message(window_marker(W1))]))
    bridge.promote(concealed)
    # A stale carrier replayed in a later request is just text.
    assert bridge.promote(concealed) == concealed
    fresh = to_llm(bridge.conceal([marker_message(window_marker(W1))]))
    assert fresh[0].content != concealed[0].content


def test_a_duplicated_carrier_is_an_error():
    bridge = DeveloperMessageBridge()
    concealed = to_llm(bridge.conceal([marker_message(window_marker(W1))]))
    with pytest.raises(CarrierError):
        bridge.promote(concealed + concealed)


def test_reveal_restores_the_text_as_a_user_message():
    boundary = marker_message(window_marker(W1))
    bridge = DeveloperMessageBridge()
    revealed = bridge.reveal(to_llm(bridge.conceal([boundary])))
    assert isinstance(revealed[0], UserMessage)
    assert revealed[0].content == [TextContent(text=boundary.content)]


def test_other_messages_pass_through_untouched():
    bridge = DeveloperMessageBridge()
    other = CustomMessage(custom_type="other", content="x", display=True, timestamp=1)
    assert bridge.conceal([other]) == [other]
    assistant_like = [user("a")]
    assert bridge.promote(assistant_like) == assistant_like
    assert AssistantMessage  # imported for the message union


def test_carriers_survive_the_real_conversion():
    from ctxmodes.session.convert import convert_to_llm

    boundary = marker_message(window_marker(W1))
    bridge = DeveloperMessageBridge()
    llm = convert_to_llm(bridge.conceal([boundary, user("go")]))
    promoted = bridge.promote(llm)
    assert isinstance(promoted[0], DeveloperMessage)
    assert promoted[0].text == boundary.content
    assert promoted[1] == user("go")
