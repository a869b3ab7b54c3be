"""``AgentHost.reload_resources``: the session's context files, templates, skills and system
prompt files read again, the system prompt rebuilt from them (Pi's ``/reload``); a session
that replaces the running one loads its own, before the running one is let go."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support.terminal import GatedStream

from ctxmodes.config import Settings
from ctxmodes.errors import ConfigError
from ctxmodes.host.errors import SessionBusyError
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.resources import default_loader
from ctxmodes.sdk import open_agent


def _provider(*answers: str) -> ScriptedProvider:
    return ScriptedProvider(
        Script.model_validate({"responses": [{"text": answer} for answer in answers]})
    )


def test_changed_files_reach_the_system_prompt_and_the_commands(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Old rule.")
    with open_agent(
        cwd=project,
        settings=Settings(mode="off", durability="flush"),
        provider=_provider("ok"),
        session_dir=tmp_path / "sessions",
        resources=default_loader(approve=True, agent_dir=tmp_path / "agent"),
    ) as agent:
        (project / "AGENTS.md").write_text("New rule.")
        prompts = project / ".pi" / "prompts"
        prompts.mkdir(parents=True)
        (prompts / "review.md").write_text("---\ndescription: Review\n---\nReview $@")
        before = agent.session.system_prompt
        loaded = agent.host.reload_resources()
        after = agent.session.system_prompt
        assert agent.session.resources is loaded
    assert "Old rule." in before
    assert "New rule." in after
    assert "Old rule." not in after
    assert [template.name for template in loaded.templates] == ["review"]


def test_a_working_agent_is_not_reloaded(tmp_path: Path) -> None:
    gated = GatedStream(_provider("slow answer"), hold_after=1)
    with open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off", durability="flush"),
        provider=gated,
        session_dir=tmp_path / "sessions",
        resources=default_loader(approve=True, agent_dir=tmp_path / "agent"),
    ) as agent:
        runner = threading.Thread(target=agent.prompt, args=("hi",))
        runner.start()
        assert gated.held.wait(10)
        with pytest.raises(SessionBusyError):
            agent.host.reload_resources()
        gated.release.set()
        runner.join(10)


@pytest.mark.parametrize("replace", ["new", "fork", "resume the same file"])
def test_a_session_whose_resources_cannot_load_leaves_the_running_one_as_it_was(
    tmp_path: Path, replace: str
) -> None:
    """A ``settings.json`` that stopped being JSON during the run (its skill and template
    entries are read for each session): the replacement is refused in one line, and the
    running session goes on, where it would otherwise be let go with nothing after it."""
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    with open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off", durability="flush"),
        provider=_provider("first", "second"),
        session_dir=tmp_path / "sessions",
        resources=default_loader(approve=True, agent_dir=agent_dir),
    ) as agent:
        agent.prompt("hi")
        before = agent.session_manager.session_file
        assert before is not None
        (agent_dir / "settings.json").write_text('{"prompts": [')
        replacements = {
            "new": agent.new_session,
            "fork": lambda: agent.fork(None),
            "resume the same file": lambda: agent.resume(before),
        }
        with pytest.raises(ConfigError, match=r"settings\.json: Expecting value"):
            replacements[replace]()
        assert agent.session_manager.session_file == before
        agent.prompt("again")
    assert before.read_text().count('"role":"assistant"') == 2


def test_closing_while_a_new_session_waits_for_its_trust_question_ends(tmp_path: Path) -> None:
    """``/new`` asks about a project that gained files needing trust before it locks the
    host; a close meanwhile (the terminal quitting) lets it settle first, where closing
    with the host locked would wait for it for ever."""
    asked, answer = threading.Event(), threading.Event()

    def ask(question: str, choices: Any) -> None:  # answers nothing: not trusted
        asked.set()
        answer.wait(5)

    agent = open_agent(
        cwd=tmp_path,
        settings=Settings(mode="off", durability="flush"),
        provider=_provider("ok"),
        session_dir=tmp_path / "sessions",
        resources=default_loader(ask=ask, agent_dir=tmp_path / "agent"),
    )
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text("{}")
    command = threading.Thread(target=agent.prompt, args=("/new",))
    command.start()
    assert asked.wait(5)
    closing = threading.Thread(target=agent.close)
    closing.start()
    answer.set()
    closing.join(10)
    command.join(10)
    assert not closing.is_alive()
    assert not command.is_alive()
