"""``/import FILE``: the terminal continues in a copy of a session file, made in its session
directory as Pi's ``/import`` makes it, after a confirmation; plugins may keep the session;
Pi's refusals; the real Pi opens the imported session, continued here, as we do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.agents import make_agent
from support.pi_oracle import our_view, require_oracle_cases, require_pi
from support.terminal import ENTER, ESC, run_terminal

from ctxmodes import SessionChangeDecision, SessionSwitchRequest, hookimpl
from ctxmodes.session.manager import SessionManager


def _pi_session(tmp_path: Path) -> Path:
    """A session file Pi wrote (the oracle corpus), its working directory made one that
    exists here."""
    case = require_oracle_cases() / "branch_simple.jsonl"
    header, *rest = case.read_text().splitlines()
    project = tmp_path / "elsewhere"
    project.mkdir(exist_ok=True)
    source = project / "from-pi.jsonl"
    source.write_text(
        "\n".join([json.dumps({**json.loads(header), "cwd": str(tmp_path)}), *rest]) + "\n"
    )
    return source


async def _import(t: Any, path: str) -> None:
    await t.type(f"/import {path}" + ENTER)
    await t.until(lambda: t.session.picker is not None, "the confirmation")
    await t.type(ENTER)


def test_the_file_is_copied_into_the_session_directory_and_resumed(tmp_path):
    source = _pi_session(tmp_path)
    original = source.read_bytes()
    agent = make_agent(tmp_path, [])
    files: list[Path] = []

    async def scenario(t):
        said = f"Session imported from: {source}"
        for count in (1, 2):
            await _import(t, str(source))
            await t.until(lambda n=count: t.flat().count(said) == n, "the import")
            await t.idle()
            files.append(agent.session_file)

    run_terminal(agent, scenario)
    sessions = tmp_path / "sessions"
    assert files == [sessions / "from-pi.jsonl", sessions / "from-pi-1.jsonl"]
    # The copy is the file as it was; resuming it may record the model it runs on now.
    assert files[0].read_bytes().startswith(original)
    assert source.read_bytes() == original


@pytest.mark.pi
def test_the_real_pi_opens_the_imported_session_continued_here(tmp_path):
    pi = require_pi()
    source = _pi_session(tmp_path)
    agent = make_agent(tmp_path, [{"text": "continued here"}])

    async def scenario(t):
        await _import(t, str(source))
        await t.printed("Session imported from:")
        await t.idle()
        await t.type("go on" + ENTER)
        await t.printed("continued here")
        await t.idle()

    run_terminal(agent, scenario)
    imported = tmp_path / "sessions" / "from-pi.jsonl"
    manager = SessionManager.open(imported, read_only=True)
    try:
        ours = our_view(manager, [None])
    finally:
        manager.close()
    (answer,) = pi.open_many([{"file": str(imported), "at": [None]}])
    assert json.dumps(answer, sort_keys=True) == json.dumps(ours, sort_keys=True)
    assert "continued here" in json.dumps(answer["context"])


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/import", "Usage: /import <path.jsonl>"),
        ("/import   ", "Usage: /import <path.jsonl>"),
        ('/import "never closed.jsonl', "Usage: /import <path.jsonl>"),
    ],
)
def test_a_missing_path_is_refused_with_pi_s_usage(tmp_path, typed, said):
    agent = make_agent(tmp_path, [])

    async def scenario(t):
        await t.type(typed + ENTER)
        await t.printed(said)

    run_terminal(agent, scenario)


def test_a_file_that_is_not_there_is_named_and_nothing_changes(tmp_path):
    agent = make_agent(tmp_path, [])
    before = agent.session_file
    missing = tmp_path / "no such.jsonl"

    async def scenario(t):
        await _import(t, f'"{missing}"')
        await t.printed(f"Failed to import session: File not found: {missing}")
        await t.idle()

    run_terminal(agent, scenario)
    assert agent.session_file == before
    assert not (tmp_path / "sessions").exists()


class Keeper:
    def __init__(self) -> None:
        self.asked: list[SessionSwitchRequest] = []

    @hookimpl
    def ctx_session_before_switch(
        self, session: Any, request: SessionSwitchRequest
    ) -> SessionChangeDecision:
        self.asked.append(request)
        return SessionChangeDecision(cancel=True)


def test_declining_or_a_plugin_keeps_the_session_and_nothing_is_copied(tmp_path):
    source = _pi_session(tmp_path)
    keeper = Keeper()
    agent = make_agent(tmp_path, [])
    agent.host.plugin_manager.register(keeper)
    before = agent.session_file

    async def scenario(t):
        await t.type(f"/import {source}" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the confirmation")
        await t.type(ESC)
        await t.printed("Import cancelled")
        assert keeper.asked == []
        await _import(t, str(source))
        await t.until(lambda: keeper.asked, "the plugin to be asked")
        await t.idle()

    text = run_terminal(agent, scenario).text()
    copy = tmp_path / "sessions" / "from-pi.jsonl"
    assert keeper.asked == [SessionSwitchRequest("resume", str(copy))]
    assert text.count("Import cancelled") == 2
    assert agent.session_file == before
    assert not copy.exists()
