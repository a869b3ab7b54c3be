"""``AgentHost.reload_resources``: the session's context files, templates, skills and system
prompt files read again, the system prompt rebuilt from them (Pi's ``/reload``)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.terminal import GatedStream

from ctxmodes.config import Settings
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
