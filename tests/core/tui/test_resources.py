"""Templates and skills in the terminal: listed at start-up, offered by completion, expanded
when sent (through prompt_toolkit's pipe input)."""

from __future__ import annotations

from pathlib import Path

import orjson
from support.terminal import ENTER, TAB, run_terminal

from ctxmodes.config import Settings, TerminalSettings
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.resources import default_loader
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.app import plain
from ctxmodes.tui.replay import branch_blocks


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _agent(tmp_path: Path, project: Path, answer: str, *, trusted: bool = True) -> Agent:
    """An agent in ``project`` whose model answers ``answer``."""
    provider = ScriptedProvider(Script.model_validate({"responses": [{"text": answer}]}))
    return open_agent(
        cwd=project,
        settings=Settings(mode="off", durability="flush"),
        provider=provider,
        session_dir=tmp_path / "sessions",
        resources=default_loader(approve=trusted, agent_dir=tmp_path / "agent"),
    )


def test_templates_and_skills_are_listed_completed_and_expanded(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / "AGENTS.md", "Run the tests before committing.")
    write(
        project / ".pi" / "prompts" / "review.md",
        "---\ndescription: Review files\nargument-hint: <files>\n---\nReview $@ for bugs.",
    )
    write(project / ".pi" / "skills" / "deploy" / "SKILL.md", "---\ndescription: Ship it\n---\nx")
    agent = _agent(tmp_path, project, "Reviewed.")
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.printed("[Prompts]")
        seen["banner"] = t.text()
        await t.type("/rev")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        state = t.session.buffer.complete_state
        seen["review"] = [(c.text, c.display_text, c.display_meta_text) for c in state.completions]
        await t.type("\x15/skill:")
        await t.until(lambda: t.session.buffer.complete_state is not None, "skill completions")
        seen["skills"] = [c.text for c in t.session.buffer.complete_state.completions]
        # Tab completes the name and its space, as in Pi: the arguments follow.
        await t.type("\x15/rev")
        await t.until(lambda: t.session.buffer.complete_state is not None, "completions")
        await t.type(TAB)
        await t.until(lambda: t.editor == "/review ", "the completed name")
        await t.type("a.py b.py" + ENTER)
        await t.printed("Reviewed.")
        await t.idle()

    run_terminal(agent, scenario)
    banner = str(seen["banner"])
    assert "[Context]\n  AGENTS.md" in banner
    assert "[Skills]\n  deploy" in banner
    assert "[Prompts]\n  /review" in banner
    assert seen["review"] == [("/review ", "/review <files>", "Review files")]
    assert seen["skills"] == ["/skill:deploy "]
    lines = [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]
    users = [e["message"] for e in lines if e.get("message", {}).get("role") == "user"]
    assert [u["content"][0]["text"] for u in users] == ["Review a.py b.py for bugs."]


def test_without_skill_commands_completion_offers_none_and_a_typed_one_still_expands(
    tmp_path: Path,
) -> None:
    """Pi's ``enableSkillCommands`` off: no ``/skill:`` in completion; typed, it expands."""
    project = tmp_path / "project"
    write(
        project / ".pi" / "skills" / "deploy" / "SKILL.md", "---\ndescription: Ship it\n---\nSHIP"
    )
    agent = _agent(tmp_path, project, "Shipped.")
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.printed("[Skills]")
        await t.type("/skill:")
        await t.type(TAB)
        seen["completion"] = t.session.buffer.complete_state
        await t.type("deploy now" + ENTER)
        await t.printed("Shipped.")
        await t.idle()

    run_terminal(agent, scenario, settings=TerminalSettings(skill_commands=False))
    assert seen["completion"] is None
    lines = [orjson.loads(line) for line in agent.session_file.read_bytes().splitlines()[1:]]
    (user,) = [e["message"] for e in lines if e.get("message", {}).get("role") == "user"]
    text = user["content"][0]["text"]
    assert not text.startswith("/skill:")
    assert "SHIP" in text
    assert text.endswith("now")


def test_a_quiet_start_shows_only_what_went_wrong(tmp_path: Path) -> None:
    """Pi's ``quietStartup``: no header and no list of what loaded; what was left out for
    want of trust still shows."""
    project = tmp_path / "project"
    write(project / "AGENTS.md", "Run the tests before committing.")
    write(project / ".pi" / "prompts" / "review.md", "Review $@.")
    agent = _agent(tmp_path, project, "unused", trusted=False)
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.printed("[Project]")
        seen["start"] = t.text()

    run_terminal(agent, scenario, settings=TerminalSettings(quiet_startup=True))
    assert "ctxmodes · mode" not in seen["start"]
    assert "[Context]" not in seen["start"]
    assert "AGENTS.md" not in seen["start"]


def test_a_skill_command_shows_as_pi_shows_it_collapsed_then_the_message_typed_after_it(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(
        project / ".pi" / "skills" / "deploy" / "SKILL.md",
        "---\ndescription: Ship it\n---\nShip with `make release`.",
    )
    agent = _agent(tmp_path, project, "Shipped.")
    seen: dict[str, str] = {}

    async def scenario(t):
        await t.printed("[Skills]")
        start = len(t.text())
        await t.type("/skill:deploy to staging" + ENTER)
        await t.printed("Shipped.")
        await t.idle()
        seen["run"] = t.text()[start:]
        await t.type("\x0f")  # Ctrl+O
        await t.printed("── skill deploy output ──")
        seen["expanded"] = t.text().split("── skill deploy output ──", 1)[1]
        seen["replayed"] = plain("\n".join(branch_blocks(agent.session_manager, 80)))

    run_terminal(agent, scenario)
    run = seen["run"].strip("\n").split("\n")
    assert run[:3] == ["[skill] deploy (ctrl+o to expand)", "\u203a to staging", "Shipped."]
    assert "Ship with" not in seen["run"]
    assert "Ship with `make release`." in seen["expanded"]
    # Replayed from the session, which keeps the prompt the model read: the same, no key.
    assert "[skill] deploy\n\u203a to staging" in seen["replayed"]
