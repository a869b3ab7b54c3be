"""Every session that replaces the running one in the terminal starts with the settings of
its directory read again, as Pi's runtime rebuilt for it reads them: changed during the run
for ``/new``, another project's for ``/resume`` and ``/import``. The session and the terminal
take them as ``/reload`` takes settings read again, and as a new runtime its tools, thinking
budgets and Ctrl+P's scope; a choice made this run stands, ``/reload`` reads that project's
from then on, an untrusted project's file stays out, and a file there that cannot be read is
said in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.terminal import DOWN, ENTER, ESC, run_terminal
from support.tmux import Tmux, ctxmodes_command, private_env

from ctxmodes.config import Settings, load_settings
from ctxmodes.config_reload import ReloadableSettings
from ctxmodes.errors import ConfigError
from ctxmodes.host.options import HostOptions
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.resources import default_loader
from ctxmodes.resources.trust import (
    TrustResolver,
    default_resolver,
    trust_choices,
    trust_prompt_text,
)
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.project_settings import NOT_LOADED
from ctxmodes.tui.reload import RELOADED
from ctxmodes.tui.trust_question import ask_in_session

#: What the other project's Pi settings file sets: observable in the running session's
#: options and in the terminal's own settings.
THERE = {"steeringMode": "all", "compaction": {"reserveTokens": 2222}, "autocompleteMaxVisible": 4}


@pytest.fixture
def projects(tmp_path: Path, agent_dir: Path) -> tuple[Path, Path]:
    here, there = tmp_path / "here", tmp_path / "there"
    for project in (here, there):
        (project / ".pi").mkdir(parents=True)
    (agent_dir / "settings.json").write_text("{}")
    (there / ".pi" / "settings.json").write_text(json.dumps(THERE))
    return here, there


def _running(here: Path, trust: TrustResolver) -> tuple[ReloadableSettings, Agent]:
    """The run's settings read for ``here`` with ``trust`` (reloadable, for another
    directory too), and an agent in ``here`` whose resources the same trust decides."""

    def read(cwd: Path) -> Settings:
        return load_settings(cwd=cwd, trust=trust.is_trusted).settings

    reloadable = ReloadableSettings(read(here), read, here)
    settings = reloadable.settings
    script = Script.model_validate({"responses": [{"text": "answered"}] * 3})
    agent = open_agent(
        cwd=here,
        settings=settings.model_copy(update={"durability": "flush"}),
        options=HostOptions.of_settings(settings),
        provider=ScriptedProvider(script),
        session_dir=here / "sessions",
        resources=default_loader(trust=trust),
    )
    return reloadable, agent


def _stored(folder: Path, name: str, cwd: Path) -> Path:
    path = folder / f"{name}.jsonl"
    header = {"type": "session", "version": 3, "id": name, "timestamp": "t", "cwd": str(cwd)}
    path.write_text(json.dumps(header) + "\n")
    return path


@pytest.mark.parametrize("command", ["/resume", "/import"])
def test_the_session_and_the_terminal_take_the_other_project_s_settings(
    projects: tuple[Path, Path], agent_dir: Path, command: str
) -> None:
    here, there = projects
    other = _stored(there.parent, "other", there)
    reloadable, agent = _running(here, default_resolver(approve=True, agent_dir=agent_dir))
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        # A choice of this run, which the other project's file does not undo.
        agent.host.change_options(lambda options: options.with_auto_compaction(False))
        seen["before"] = agent.session.options
        await t.type(f"{command} {other}" + ENTER)
        if command == "/import":
            await t.until(lambda: t.session.picker is not None, "the confirmation")
            await t.type(ENTER)  # Import, replacing this session
        await t.printed("Resumed session other" if command == "/resume" else "imported from")
        await t.until(lambda: t.session.settings.completion_rows == 4, "the terminal's rows")
        seen["options"] = agent.session.options
        seen["cwd"] = Path(agent.session.cwd)
        agent.new_session()  # in that project, with its settings
        seen["next"] = agent.session.options
        (there / ".pi" / "settings.json").write_text(json.dumps({"steeringMode": "all"}))
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)
        seen["reloaded"] = agent.session.options

    run_terminal(agent, scenario, reloadable=reloadable)
    before: HostOptions = seen["before"]
    options: HostOptions = seen["options"]
    assert before.steering_mode == "one-at-a-time"
    assert before.compaction.reserve_tokens != 2222
    assert seen["cwd"] == there
    assert options.steering_mode == "all"
    assert options.compaction.reserve_tokens == 2222
    assert options.compaction.enabled is False  # changed this run: it stands
    assert seen["next"].steering_mode == "all"
    # /reload reads the other project's file now, not the start's.
    assert seen["reloaded"].compaction.reserve_tokens == before.compaction.reserve_tokens
    assert seen["reloaded"].steering_mode == "all"
    assert reloadable.cwd == there


#: Models for Ctrl+P's scope, given on the command line (where the settings read again for a
#: new session keep them).
LOOP = {
    "api": "openai-completions",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key": "sk-loop",
    "models": [{"id": "plain"}, {"id": "deep", "reasoning": True}, {"id": "wide"}, {"id": "tall"}],
}


def test_a_new_session_starts_with_the_settings_changed_meanwhile(
    tmp_path: Path, agent_dir: Path
) -> None:
    """Pi's runtime is made again for ``/new``: ``defaultTools``, ``thinkingBudgets`` and
    ``enabledModels`` changed in ``settings.json`` during the run reach the new session
    (the running one keeps its own, as in Pi); a scope chosen with ``/scoped-models``
    then stands over the file's."""
    trust = default_resolver(approve=True, agent_dir=agent_dir)
    cli = {"mode": "off", "durability": "none", "model": "loop/plain", "providers": {"loop": LOOP}}

    def read(cwd: Path) -> Settings:
        return load_settings(cwd=cwd, cli=cli, trust=trust.is_trusted).settings

    reloadable = ReloadableSettings(read(tmp_path), read, tmp_path)
    agent = open_agent(
        cwd=tmp_path,
        settings=reloadable.settings,
        options=HostOptions.of_settings(reloadable.settings),
        session_dir=tmp_path / "sessions",
    )
    changed = {
        "defaultTools": ["read", "grep"],
        "thinkingBudgets": {"low": 1234},
        "enabledModels": ["loop/deep", "loop/plain"],
    }
    seen: dict[str, Any] = {}

    def now(name: str, t: Any) -> None:
        seen[name] = {
            "tools": list(agent.session.tools),
            "budgets": dict(agent.session.options.thinking_budgets),
            "scope": [scoped.model.ref for scoped in t.session.cycler.scope],
        }

    async def replaced(t: Any) -> None:
        before = agent.session_manager.session_id
        await t.type("/new" + ENTER)
        await t.until(lambda: agent.session_manager.session_id != before, "the new session")
        # Said after the terminal took its part of the settings, on its own thread.
        await t.printed(f"New session {agent.session_manager.session_id}")

    async def scenario(t: Any) -> None:
        now("start", t)
        (agent_dir / "settings.json").write_text(json.dumps(changed))
        now("running", t)
        await replaced(t)
        now("new", t)
        await t.type("/scoped-models" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the list")
        await t.type(DOWN * 2 + ENTER)  # wide joins the scope
        await t.escape()
        await t.until(lambda: t.session.picker is None, "the list to close")
        changed["enabledModels"] = ["loop/plain"]
        (agent_dir / "settings.json").write_text(json.dumps(changed))
        await replaced(t)
        now("chosen", t)

    run_terminal(agent, scenario, reloadable=reloadable)
    start = seen["start"]
    assert start["tools"] == ["read", "bash", "edit", "write", "notebook"]
    assert start["scope"] == []
    assert seen["running"] == start
    assert seen["new"] == {
        "tools": ["read", "grep"],
        "budgets": {**start["budgets"], "low": 1234},
        "scope": ["loop/deep", "loop/plain"],
    }
    assert seen["chosen"]["scope"] == ["loop/deep", "loop/plain", "loop/wide"]


@pytest.mark.parametrize(
    ("answer", "trusted", "saved"),
    [
        pytest.param(ENTER, True, {"there": True}, id="trust"),
        pytest.param(DOWN * 2 + ENTER, True, {}, id="trust this session only"),
        pytest.param(DOWN * 3 + ENTER, False, {"there": False}, id="do not trust"),
        pytest.param(ESC, False, {}, id="escape"),
    ],
)
def test_a_project_not_yet_decided_is_asked_about_before_its_session_opens(
    projects: tuple[Path, Path], agent_dir: Path, answer: str, trusted: bool, saved: dict[str, bool]
) -> None:
    """As Pi asks when it rebuilds its runtime for the project: the start-up's question and
    answers, before the session is replaced; the answer decides the project's settings and
    resources (a prompt template of its own here), and a lasting one is saved in Pi's
    ``trust.json``. Esc is *do not trust* for this run, as at start-up."""
    here, there = projects
    (there / ".pi" / "prompts").mkdir()
    (there / ".pi" / "prompts" / "there-only.md").write_text("From there.")
    other = _stored(there.parent, "other", there)
    trust = default_resolver(agent_dir=agent_dir)
    reloadable, agent = _running(here, trust)
    seen: dict[str, Any] = {}

    started = reloadable.settings

    async def scenario(t: Any) -> None:
        trust.ask = ask_in_session(t.session)
        await t.type(f"/resume {other}" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the question")
        seen["question"] = t.session.picker.title
        seen["answers"] = [row.text for row in t.session.picker.items("")]
        seen["replaced before the answer"] = Path(agent.session.cwd) != here
        if answer == ESC:
            await t.escape()
        else:
            await t.type(answer)
        await t.printed("Resumed session other")
        await t.until(lambda: reloadable.settings is not started, "the project's settings")
        seen["options"] = agent.session.options
        seen["templates"] = [template.name for template in agent.session.resources.templates]

    run_terminal(agent, scenario, reloadable=reloadable, trust=trust)
    assert seen["question"] == trust_prompt_text(there)
    assert seen["answers"] == [choice.label for choice in trust_choices(there)]
    assert seen["replaced before the answer"] is False
    assert (seen["options"].steering_mode == "all") is trusted
    assert ("there-only" in seen["templates"]) is trusted
    store = agent_dir / "trust.json"
    recorded = json.loads(store.read_text()) if store.exists() else {}
    assert recorded == {str(there.resolve()): value for value in saved.values()}


@pytest.mark.parametrize(("answer", "trusted"), [(ENTER, True), (DOWN * 3 + ENTER, False)])
def test_a_project_that_gains_files_during_the_run_is_asked_about_at_new(
    projects: tuple[Path, Path], agent_dir: Path, answer: str, trusted: bool
) -> None:
    """Started where nothing needed trust, the run decided nothing: a ``.pi/settings.json``
    checked out into the folder meanwhile is asked about when ``/new`` makes the next
    session, as Pi asks when it makes its runtime again, not taken as trusted."""
    here, _ = projects
    trust = default_resolver(agent_dir=agent_dir)
    reloadable, agent = _running(here, trust)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        trust.ask = ask_in_session(t.session)
        (here / ".pi" / "settings.json").write_text(json.dumps(THERE))
        before = agent.session_manager.session_id
        await t.type("/new" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the question")
        seen["question"] = t.session.picker.title
        await t.type(answer)
        await t.until(lambda: agent.session_manager.session_id != before, "the new session")
        seen["options"] = agent.session.options

    run_terminal(agent, scenario, reloadable=reloadable, trust=trust)
    assert seen["question"] == trust_prompt_text(here)
    assert (seen["options"].steering_mode == "all") is trusted


def test_a_file_there_that_cannot_be_read_is_said_and_the_run_s_settings_stay(
    projects: tuple[Path, Path], agent_dir: Path
) -> None:
    here, there = projects
    (there / ".pi" / "settings.json").write_text('{"retry": {"maxRetries": "many"}}')
    other = _stored(there.parent, "other", there)
    reloadable, agent = _running(here, default_resolver(approve=True, agent_dir=agent_dir))
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        before = agent.session.options
        await t.type(f"/resume {other}" + ENTER)
        await t.printed(NOT_LOADED.format(cwd=there))
        await t.printed("Resumed session other")
        seen["unchanged"] = agent.session.options == before
        seen["cwd"] = Path(agent.session.cwd)

    text = run_terminal(agent, scenario, reloadable=reloadable).flat()
    with pytest.raises(ConfigError) as start_up:
        load_settings(cwd=there, trust=lambda _directory: True)
    assert " ".join(str(start_up.value).split()) in text
    assert seen["unchanged"] is True
    assert seen["cwd"] == there  # the session is resumed all the same, as in Pi


@pytest.mark.slow  # a real terminal, end to end
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_ctxmodes_chat_asks_about_the_other_project_and_takes_its_default_level(
    tmp_path: Path,
) -> None:
    """The command line's session: ``/resume`` of another project's session asks whether to
    trust that project, and once trusted the thinking selector marks the default its
    settings name."""
    here, there = tmp_path / "here", tmp_path / "there"
    for project in (here, there):
        (project / ".pi").mkdir(parents=True)
    (there / ".pi" / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "off"}))
    other = _stored(tmp_path, "other", there)
    (tmp_path / "script.json").write_text('{"responses": [{"text": "hi"}]}')
    command = ctxmodes_command("chat", "--model", f"scripted:{tmp_path / 'script.json'}")
    tmux = Tmux(["env", "-C", str(here), *command], private_env(tmp_path))
    try:
        tmux.wait("scripted/scripted")
        tmux.type("/thinking")
        tmux.key("Enter")
        before = tmux.wait("Thinking Level")
        tmux.key("Escape")
        tmux.until(lambda screen: "Thinking Level" not in screen)
        tmux.type(f"/resume {other}")
        tmux.key("Enter")
        question = tmux.wait("Trust (this session only)")
        tmux.key("Down", "Down", "Enter")
        tmux.wait("Resumed session other")
        tmux.type("/thinking")
        tmux.key("Enter")
        after = tmux.wait("Thinking Level")
    finally:
        tmux.close()
    lines = [line.rstrip() for line in question.splitlines()]
    assert lines[lines.index("Trust project folder?") + 1] == str(there)
    assert "No reasoning · default" not in before
    assert "No reasoning · default" in after
