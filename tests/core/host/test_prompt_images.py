"""Images submitted with a prompt (a command line's ``@FILE`` images): they follow the text in
the user message, as Pi builds it, wherever the text goes — started at once, queued during a
run, held during a compaction — and ``ctx_input`` sees them and may replace them."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from support.host_rig import EchoTool, ToolsPlugin, text_response, tool_response
from support.images import dot_gif, solid_png

from ctxmodes import Command, InputEvent, InputResult, hookimpl
from ctxmodes.compaction import CompactionSettings
from ctxmodes.host.options import HostOptions
from ctxmodes.session.models import ImageContent, TextContent, UserMessage

# Keys in the order Pi writes an image attached to a prompt.
PNG = ImageContent(
    mime_type="image/png", data=base64.b64encode(solid_png(2, 2, (9, 9, 9))).decode()
)
GIF = ImageContent(mime_type="image/gif", data=base64.b64encode(dot_gif()).decode())
OTHER = ImageContent(
    mime_type="image/png", data=base64.b64encode(solid_png(1, 1, (0, 0, 0))).decode()
)


def _stored_users(rig: Any) -> list[dict[str, Any]]:
    return [m for m in rig.messages_in_file() if m["role"] == "user"]


def _image(image: ImageContent) -> dict[str, str]:
    return {"type": "image", "mimeType": image.mime_type, "data": image.data}


@pytest.mark.parametrize("how", ["prompt", "submit"])
def test_images_follow_the_text_in_the_user_message_the_model_and_the_file_get(
    make_rig: Any, how: str
) -> None:
    rig = make_rig([text_response("seen")])
    getattr(rig.session, how)("look", images=[PNG, GIF])
    [message] = [m for m in rig.session.messages if isinstance(m, UserMessage)]
    assert message.content == [TextContent(text="look"), PNG, GIF]
    [sent] = [m for m in rig.requests()[0].messages if isinstance(m, UserMessage)]
    assert sent.content == message.content
    [stored] = _stored_users(rig)
    assert stored["content"] == [{"type": "text", "text": "look"}, _image(PNG), _image(GIF)]
    # Pi's bytes: an attached image's mimeType comes before its data.
    line = next(
        line
        for line in rig.manager.session_file.read_text().splitlines()
        if json.loads(line).get("message", {}).get("role") == "user"
    )
    assert f'{{"type":"image","mimeType":"image/png","data":"{PNG.data}"}}' in line


def test_a_prompt_without_images_is_its_text_alone(make_rig: Any) -> None:
    rig = make_rig([text_response("seen")])
    rig.session.submit("look")
    assert _stored_users(rig)[0]["content"] == [{"type": "text", "text": "look"}]


class _Input:
    """Records each ``ctx_input`` event and answers with ``result``."""

    def __init__(self, result: InputResult | None) -> None:
        self.result = result
        self.events: list[InputEvent] = []

    @hookimpl
    def ctx_input(self, session: Any, event: InputEvent) -> InputResult | None:
        self.events.append(event)
        return self.result


@pytest.mark.parametrize(
    ("result", "content"),
    [
        (None, ["look", PNG, GIF]),
        (InputResult("transform", text="look closer"), ["look closer", PNG, GIF]),
        (InputResult("transform", images=(OTHER,)), ["look", OTHER]),
        (InputResult("transform", text="just text", images=()), ["just text"]),
    ],
    ids=["continue", "transform-text", "transform-images", "transform-drop-images"],
)
def test_ctx_input_sees_the_images_and_a_transform_keeps_them_unless_it_replaces_them(
    make_rig: Any, result: InputResult | None, content: list[Any]
) -> None:
    plugin = _Input(result)
    rig = make_rig([text_response("seen")], plugins=[plugin])
    rig.session.submit("look", images=[PNG, GIF])
    [event] = plugin.events
    assert (event.text, event.images) == ("look", (PNG, GIF))
    [message] = [m for m in rig.session.messages if isinstance(m, UserMessage)]
    text, *images = content
    assert message.content == [TextContent(text=text), *images]


def test_input_a_plugin_handles_sends_nothing_images_and_all(make_rig: Any) -> None:
    rig = make_rig([text_response("never")], plugins=[_Input(InputResult("handled"))])
    rig.session.submit("look", images=[PNG])
    assert _stored_users(rig) == []
    assert rig.requests() == []


def test_images_queued_during_a_run_stay_with_their_text(make_rig: Any) -> None:
    def type_during_the_tool(context: Any) -> None:
        context.session.submit("steered", images=[GIF], streaming_behavior="steer")
        context.session.follow_up("followed up", images=[OTHER])
        context.session.send_user_message("from a plugin", deliver_as="follow_up", images=[PNG])

    rig = make_rig(
        [
            tool_response("echo", {"text": "x"}),
            text_response("after steering"),
            text_response("after the follow-up"),
            text_response("after the plugin's"),
        ],
        plugins=[ToolsPlugin(EchoTool(on_run=type_during_the_tool))],
    )
    rig.session.prompt("start")
    assert [m["content"] for m in _stored_users(rig)] == [
        [{"type": "text", "text": "start"}],
        [{"type": "text", "text": "steered"}, _image(GIF)],
        [{"type": "text", "text": "followed up"}, _image(OTHER)],
        [{"type": "text", "text": "from a plugin"}, _image(PNG)],
    ]


def test_images_submitted_during_a_compaction_are_held_with_their_text(make_rig: Any) -> None:
    class Typist:
        @hookimpl
        def ctx_session_before_compact(self, session: Any, request: Any) -> None:
            session.submit("typed during compaction", images=[PNG])

    rig = make_rig(
        [text_response("first answer " * 20), text_response("second")],
        summaries=["the summary"],
        plugins=[Typist()],
        options=HostOptions(compaction=CompactionSettings(keep_recent_tokens=10)),
    )
    rig.session.prompt("first question " * 20)
    rig.session.compact()
    assert _stored_users(rig)[-1]["content"] == [
        {"type": "text", "text": "typed during compaction"},
        _image(PNG),
    ]


def test_a_command_submitted_with_images_runs_and_sends_nothing(make_rig: Any) -> None:
    ran: list[str] = []

    class Commands:
        @hookimpl
        def ctx_register_commands(self, register: Any, session: Any) -> None:
            register(Command("shots", "Record its arguments", lambda args, _: ran.append(args)))

    rig = make_rig([text_response("never")], plugins=[Commands()])
    rig.session.submit("/shots two", images=[PNG])
    assert ran == ["two"]
    assert _stored_users(rig) == []
