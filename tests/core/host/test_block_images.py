"""``block_images`` (Pi's ``images.blockImages``): the model is sent a short text in place of
each image, once for a run of them, as Pi sends it; the session keeps the images."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from support.host_rig import ToolsPlugin, text_response, tool_response
from support.images import solid_png

from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.host.shaping import BLOCKED_IMAGE_TEXT
from ctxmodes.session.models import ImageContent, TextContent, ToolResultMessage
from ctxmodes.tools.base import ToolContext, ToolResult

PNG = base64.b64encode(solid_png(2, 2, (10, 200, 10))).decode()


class Screenshot:
    """Answers with two images, a caption, and a third image."""

    name = "screenshot"
    label = "Screenshot"
    description = "Take screenshots."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        image = ImageContent(data=PNG, mime_type="image/png")
        return ToolResult(content=[image, image, TextContent(text="caption"), image])


def _results_sent(make_rig, block_images: bool) -> tuple[list[Any], list[Any]]:
    rig = make_rig(
        [tool_response("screenshot"), text_response("seen")],
        plugins=[ToolsPlugin(Screenshot())],
        options=HostOptions(block_images=block_images),
    )
    rig.session.prompt("look")
    sent = rig.of(records.ProviderRequested)[-1].request.messages
    (result,) = [m for m in sent if getattr(m, "role", "") == "toolResult"]
    (stored,) = [m for m in rig.session.messages if isinstance(m, ToolResultMessage)]
    return list(result.content), list(stored.content)


@pytest.mark.parametrize("block_images", [True, False])
def test_images_reach_the_model_unless_blocked_and_stay_in_the_session(make_rig, block_images):
    sent, stored = _results_sent(make_rig, block_images)
    assert [type(block).__name__ for block in stored] == [
        "ImageContent",
        "ImageContent",
        "TextContent",
        "ImageContent",
    ]
    if not block_images:
        assert [type(block).__name__ for block in sent] == [
            type(block).__name__ for block in stored
        ]
        return
    assert [getattr(block, "text", None) for block in sent] == [
        BLOCKED_IMAGE_TEXT,
        "caption",
        BLOCKED_IMAGE_TEXT,
    ]
