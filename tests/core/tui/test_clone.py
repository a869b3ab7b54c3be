"""``/clone``: the terminal continues in a copy of its session, as Pi's interactive ``/clone``
does, through the host's session replacement (plugins may keep the session), with Pi's
refusals; the real Pi opens the copy as we do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.agents import ForkKeeper, make_agent
from support.pi_oracle import our_view, require_pi
from support.terminal import ENTER, run_terminal

from ctxmodes import ForkRequest
from ctxmodes.host.runtime import NOT_SAVED_MESSAGE
from ctxmodes.session.manager import SessionManager


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _cloned(tmp_path: Path) -> tuple[Path, Path, str]:
    """A session with one exchange, then ``/clone``: the file before, the copy, the
    transcript."""
    agent = make_agent(tmp_path, [{"text": "first answer"}])
    seen: dict[str, Path] = {}

    async def scenario(t):
        await t.type("question" + ENTER)
        await t.printed("first answer")
        await t.idle()
        seen["before"] = agent.session_file
        await t.type("/clone" + ENTER)
        await t.printed("Cloned to new session")
        await t.idle()
        seen["after"] = agent.session_file

    text = run_terminal(agent, scenario).text()
    return seen["before"], seen["after"], text


def test_clone_continues_in_a_copy_that_names_its_origin(tmp_path):
    before, after, _ = _cloned(tmp_path)
    assert after != before
    assert after.parent == before.parent
    header, *entries = _lines(after)
    assert header["parentSession"] == str(before)
    assert header["id"] != _lines(before)[0]["id"]
    assert entries == _lines(before)[1:]


@pytest.mark.pi
def test_the_real_pi_opens_the_copy_as_we_do(tmp_path):
    pi = require_pi()
    _, after, _ = _cloned(tmp_path)
    manager = SessionManager.open(after, read_only=True)
    try:
        ours = our_view(manager, [None])
    finally:
        manager.close()
    (answer,) = pi.open_many([{"file": str(after), "at": [None]}])
    assert json.dumps(answer, sort_keys=True) == json.dumps(ours, sort_keys=True)
    assert answer["context"]


def test_a_session_not_written_yet_is_not_cloned(tmp_path):
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type("/clone" + ENTER)
        await t.printed(NOT_SAVED_MESSAGE)

    run_terminal(agent, scenario)
    assert not (tmp_path / "sessions").exists() or not list((tmp_path / "sessions").iterdir())


def test_nothing_is_cloned_before_the_first_entry(tmp_path):
    agent = make_agent(tmp_path, [])
    agent.session_manager.reset_leaf()

    async def scenario(t):
        await t.type("/clone" + ENTER)
        await t.printed("Nothing to clone yet")

    run_terminal(agent, scenario)


def test_a_plugin_keeps_the_session_and_nothing_is_written(tmp_path):
    keeper = ForkKeeper()
    agent = make_agent(tmp_path, [{"text": "kept answer"}])
    agent.host.plugin_manager.register(keeper)
    seen: dict[str, Any] = {}

    async def scenario(t):
        await t.type("question" + ENTER)
        await t.printed("kept answer")
        await t.idle()
        seen["file"], seen["bytes"] = agent.session_file, agent.session_file.read_bytes()
        seen["leaf"] = agent.session_manager.get_leaf_id()
        await t.type("/clone" + ENTER)
        await t.until(lambda: keeper.asked, "the plugin to be asked")
        await t.idle()

    text = run_terminal(agent, scenario).text()
    assert keeper.asked == [ForkRequest(seen["leaf"], "at")]
    assert agent.session_file == seen["file"]
    assert seen["file"].read_bytes() == seen["bytes"]
    assert list(seen["file"].parent.iterdir()) == [seen["file"]]
    assert "Cloned" not in text
