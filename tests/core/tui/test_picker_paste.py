"""A paste while a picker is open goes where Pi's goes: into the search, its line breaks
dropped and a tab as four spaces, as Pi's search fields take one; a fixed list of choices
ignores it; never into the editor behind the picker."""

from __future__ import annotations

from typing import Any

from support.agents import make_agent
from support.terminal import ENTER, ESC, run_terminal

from ctxmodes.tui.picker import Picker, PickerItem


def _pasted(text: str) -> str:
    return f"\x1b[200~{text}\x1b[201~"


def test_a_paste_goes_into_the_search_of_the_open_picker(tmp_path: Any) -> None:
    agent = make_agent(tmp_path, [{"text": "one"}])
    seen: dict[str, str] = {}

    async def scenario(t: Any) -> None:
        await t.type("/resume" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the resume picker")
        await t.type("a" + _pasted("b\r\nc\td") + "e")
        seen["query"] = t.session.picker.query
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the picker to close")
        seen["editor"] = t.session.buffer.text

    run_terminal(agent, scenario)
    assert seen == {"query": "abc    de", "editor": ""}


def test_a_fixed_list_ignores_a_paste(tmp_path: Any) -> None:
    agent = make_agent(tmp_path, [{"text": "one"}])
    choices = [PickerItem(key, key, [("", key)]) for key in ("first", "second")]
    picked: list[Any] = []
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        t.session.open_picker(
            Picker(
                "Choose",
                lambda query: choices,
                lambda item: picked.append(item.key),
                filterable=False,
            )
        )
        await t.until(lambda: t.session.picker is not None, "the list")
        await t.type(_pasted("jj second"))  # j would move down a fixed list, typed
        seen["selected"] = t.session.picker.selected
        seen["query"] = t.session.picker.query
        await t.type(ENTER)
        await t.until(lambda: t.session.picker is None, "the list to close")
        seen["editor"] = t.session.buffer.text

    run_terminal(agent, scenario)
    assert seen == {"selected": 0, "query": "", "editor": ""}
    assert picked == ["first"]
