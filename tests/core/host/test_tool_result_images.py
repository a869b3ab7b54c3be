"""Every tool's images are made to fit what models take before the result is recorded, as
Pi's ``normalizeToolResultImages`` does for tools that make images themselves: a large one
is shrunk and Pi's note follows it; one that fits, or that cannot be read, stays as the
tool gave it. Pi's ``images.autoResize`` off, nothing is shrunk."""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image
from support.host_rig import ToolsPlugin, text_response, tool_response
from support.images import solid_png

from ctxmodes.host import records
from ctxmodes.host.options import HostOptions
from ctxmodes.session.models import ImageContent, TextContent, ToolResultMessage
from ctxmodes.tools.base import ToolContext, ToolResult


def _png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (90, 20, 160)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


LARGE = _png(3000, 1200)
SMALL = base64.b64encode(solid_png(2, 2, (10, 200, 10))).decode()
BROKEN = base64.b64encode(b"\x89PNG\r\n\x1a\n not really").decode()


class Screenshot:
    """Answers with a caption, a large image, a small one and one that does not decode."""

    name = "screenshot"
    label = "Screenshot"
    description = "Take screenshots."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def execute(self, call_id: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        images = [ImageContent(data=data, mime_type="image/png") for data in (LARGE, SMALL, BROKEN)]
        return ToolResult(content=[TextContent(text="caption"), *images])


def _recorded(make_rig: Any, auto_resize: bool) -> tuple[list[Any], list[Any]]:
    rig = make_rig(
        [tool_response("screenshot"), text_response("seen")],
        plugins=[ToolsPlugin(Screenshot())],
        options=HostOptions(auto_resize_images=auto_resize),
    )
    rig.session.prompt("look")
    (stored,) = [m for m in rig.session.messages if isinstance(m, ToolResultMessage)]
    (ended,) = rig.of(records.ToolExecutionEnded)
    return list(stored.content), list(ended.result.content)


def test_a_tool_s_large_image_is_shrunk_and_pi_s_note_follows_it(make_rig: Any) -> None:
    stored, ended = _recorded(make_rig, auto_resize=True)
    assert stored == ended
    caption, image, note, small, broken = stored
    assert caption == TextContent(text="caption")
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image.data))).size == (2000, 800)
    assert note == TextContent(
        text="[Image: original 3000x1200, displayed at 2000x800. Multiply coordinates by 1.50 "
        "to map to original image.]"
    )
    assert (small.data, broken.data) == (SMALL, BROKEN)


def test_with_auto_resize_off_a_tool_s_images_stay_as_they_are(make_rig: Any) -> None:
    stored, _ = _recorded(make_rig, auto_resize=False)
    assert [block.data for block in stored[1:]] == [LARGE, SMALL, BROKEN]
