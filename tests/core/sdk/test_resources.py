"""Project context, templates and skills through the embedding API: by default a project's
own files wait for trust (nobody is asked), context files do not; templates expand in
``prompt``, ``steer`` and ``follow_up``, never in a plugin's own messages."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ctxmodes.config import Settings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.sdk import default_loader, open_agent


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    agent_dir = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(agent_dir / "prompts" / "hello.md", "Hello ${1:-world}")
    folder = tmp_path / "clone"
    write(folder / "AGENTS.md", "PROJECT-RULES")
    write(folder / ".pi" / "SYSTEM.md", "PROJECT-SYSTEM")
    write(folder / ".pi" / "prompts" / "fix.md", "Fix issue $1")
    return folder


def open_on(project: Path, tmp_path: Path, **kwargs):
    responses = [{"text": "ok"}] * 3
    provider = ScriptedProvider(Script.model_validate({"responses": responses}))
    return open_agent(
        cwd=project,
        settings=Settings(mode="off", durability="flush"),
        provider=provider,
        session_dir=tmp_path / "sessions",
        **kwargs,
    )


def user_texts(agent) -> list[str]:
    lines = [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]
    return [
        entry["message"]["content"][0]["text"]
        for entry in lines
        if entry.get("message", {}).get("role") == "user"
    ]


def test_by_default_a_project_is_not_trusted(project: Path, tmp_path: Path) -> None:
    with open_on(project, tmp_path) as agent:
        assert "PROJECT-RULES" in agent.session.system_prompt
        assert "PROJECT-SYSTEM" not in agent.session.system_prompt
        agent.prompt("/fix 12")
        agent.prompt("/hello")
        assert user_texts(agent) == ["/fix 12", "Hello world"]


def test_an_approved_project_expands_everywhere(project: Path, tmp_path: Path) -> None:
    with open_on(project, tmp_path, resources=default_loader(approve=True)) as agent:
        assert agent.session.system_prompt.startswith("PROJECT-SYSTEM")
        agent.prompt("/fix 12")
        agent.steer("/fix 13")
        agent.follow_up("/hello there")
        steering, follow_ups = agent.take_queued()
        assert (steering, follow_ups) == (["Fix issue 13"], ["Hello there"])
        agent.session.send_user_message("/fix 14")
        agent.wait_for_idle()
        assert user_texts(agent) == ["Fix issue 12", "/fix 14"]


@pytest.mark.parametrize(("approve", "mode"), [(None, "off"), (True, "tree")])
def test_the_project_configuration_follows_the_same_trust(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, approve: bool | None, mode: str
) -> None:
    """Settings loaded by ``open_agent`` take their trust from ``resources``: one decision."""
    monkeypatch.setenv("CTXMODES_CONFIG_DIR", str(tmp_path / "config"))
    write(project / ".ctxmodes.toml", 'mode = "tree"\nmodel = "scripted:none.json"\n')
    responses = [{"text": "ok"}]
    with open_agent(
        cwd=project,
        provider=ScriptedProvider(Script.model_validate({"responses": responses})),
        session_dir=tmp_path / "sessions",
        resources=default_loader(approve=approve),
    ) as agent:
        assert agent.mode == mode


def test_an_unreadable_context_file_is_a_warning_not_output(project, tmp_path, monkeypatch, capfd):
    from ctxmodes.resources import context_files

    unreadable = str(project / "AGENTS.md")
    read = context_files.read_text

    def refuse(path: Path | str) -> str:
        if str(path) == unreadable:
            raise PermissionError(13, "Permission denied", unreadable)
        return read(path)

    monkeypatch.setattr(context_files, "read_text", refuse)
    with open_on(project, tmp_path) as agent:
        agent.prompt("hi")
        warnings = agent.session.resources.warnings
        assert agent.session.resources.context_files == ()
    assert warnings == (f"Could not read {unreadable}: Permission denied",)
    assert capfd.readouterr() == ("", "")


def test_default_loader_adds_skill_and_template_paths(project: Path, tmp_path: Path) -> None:
    # A relative path is the session's working directory's, as in Pi's SDK.
    write(project / "extra" / "lint" / "SKILL.md", "---\ndescription: EXTRA-SKILL\n---\nx\n")
    write(tmp_path / "mine" / "ship.md", "Ship $1 now")
    loader = default_loader(skill_paths=["extra"], prompt_template_paths=[str(tmp_path / "mine")])
    with open_on(project, tmp_path, resources=loader) as agent:
        assert "EXTRA-SKILL" in agent.session.system_prompt
        agent.prompt("/ship v2")
        assert user_texts(agent)[-1] == "Ship v2 now"
