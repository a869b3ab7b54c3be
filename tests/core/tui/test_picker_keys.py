"""An open picker takes every key, as Pi's focused selector does: prompt_toolkit's own editing
keys never reach the draft behind it, a key no action has is ignored, an Alt key too (rather
than read as Esc and the key), and a lone Esc still closes it at once."""

from __future__ import annotations

import time
from typing import Any

from support.agents import make_agent
from support.terminal import run_terminal

CTRL_A, CTRL_G, CTRL_L, CTRL_Q = "\x01", "\x07", "\x0c", "\x11"
ALT_U, ALT_C, ALT_DOT = "\x1bu", "\x1bc", "\x1b."


def test_the_draft_behind_a_picker_keeps_every_key_from_it(tmp_path: Any) -> None:
    agent = make_agent(tmp_path, [{"text": "one"}])
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("hello world" + CTRL_A)
        await t.type(CTRL_L)
        await t.until(lambda: t.session.picker is not None, "the model picker")
        picker = t.session.picker
        # Emacs keys of the editor: upper-case, capitalise, last argument, quoted insert.
        for key in (ALT_U, ALT_C, ALT_DOT, CTRL_G, CTRL_Q):
            await t.type(key)
        await t.type("x")
        seen["open"] = t.session.picker is picker
        seen["query"] = picker.query
        seen["draft"] = t.session.buffer.text
        started = time.monotonic()
        await t.escape()
        await t.until(lambda: t.session.picker is None, "the picker to close")
        seen["closing"] = time.monotonic() - started
        await t.type("~")
        seen["typed after"] = t.session.buffer.text

    run_terminal(agent, scenario)
    assert seen["open"]
    assert seen["query"] == "x"
    assert seen["draft"] == "hello world"
    assert seen["closing"] < 0.5
    # Typing goes to the editor again, at its cursor.
    assert seen["typed after"] == "~hello world"


def test_a_list_without_a_search_ignores_an_alt_key_and_closes_on_a_lone_esc(
    tmp_path: Any,
) -> None:
    """Pi's ``/fork`` selector: a fixed list, no Alt key of its own."""
    agent = make_agent(tmp_path, [{"text": "one"}])
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        await t.type("hello\r")
        await t.idle()
        await t.type("/fork\r")
        await t.until(lambda: t.session.picker is not None, "the fork selector")
        picker = t.session.picker
        for key in (ALT_U, "\x1bj", "\x1bk"):
            await t.type(key)
        seen["open"] = t.session.picker is picker
        seen["selected"] = picker.selected
        started = time.monotonic()
        await t.escape()
        await t.until(lambda: t.session.picker is None, "the selector to close")
        seen["closing"] = time.monotonic() - started
        seen["draft"] = t.session.buffer.text

    run_terminal(agent, scenario)
    assert seen["open"]
    assert seen["selected"] == 0
    assert seen["closing"] < 0.5
    assert seen["draft"] == ""
