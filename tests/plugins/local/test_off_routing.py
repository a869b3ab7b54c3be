"""The same managed session under Off and under Local: Off hides every window marker and
shows the whole branch; Local shows the latest window with its marker as developer."""

from __future__ import annotations

from support.local_rig import call, developer_texts, markers, sent_text, text

import ctxmodes_local
import ctxmodes_off
from ctxmodes.windows.marker import CONTEXT_WINDOW_GUIDANCE
from ctxmodes.windows.projection import CARRIER_PREFIX
from ctxmodes.windows.tools import CONTEXT_TOOL_NAMES


def test_off_strips_the_markers_that_local_shows(ctx_host) -> None:
    h = ctx_host(
        [
            text("answer in window zero"),
            call("new_context"),
            text("answer in window one"),
            text("answer under off"),
            text("answer under local again"),
        ],
        plugins=[ctxmodes_off, ctxmodes_local],
        mode="local",
    )
    h.prompt("request in window zero")
    h.prompt("roll over")
    window_markers = markers(h)
    assert len(window_markers) == 2

    h.host.switch_mode("off")
    h.prompt("request under off")
    under_off = h.requests()[-1]
    sent = sent_text(under_off)
    assert developer_texts(under_off) == []
    for marker in window_markers:
        assert marker.content not in sent
    assert "<context_window" not in sent
    assert CARRIER_PREFIX not in sent
    # Without projection the earlier windows are back in view.
    assert "request in window zero" in sent
    assert "answer in window one" in sent
    assert not set(CONTEXT_TOOL_NAMES) & {tool.name for tool in under_off.tools}

    h.host.switch_mode("local")
    h.prompt("request under local again")
    again = h.requests()[-1]
    assert markers(h) == window_markers, "the branch already has a window"
    assert developer_texts(again) == [window_markers[-1].content]
    assert CONTEXT_WINDOW_GUIDANCE in developer_texts(again)[0]
    assert "request in window zero" not in sent_text(again)
    assert "request under off" in sent_text(again)
