"""``/reload`` reads the configuration again, Pi's ``settings.json`` with ctxmodes' own files,
and the running session takes what Pi's running session takes; the command line's values and
the choices made this run stand; a file that has become invalid is the start-up's error, and
nothing is reloaded."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.terminal import ENTER, run_terminal
from support.tmux import Tmux, ctxmodes_command, private_env

from ctxmodes.config import Settings, load_settings
from ctxmodes.config_reload import ReloadableSettings, kept_or_reloaded
from ctxmodes.errors import ConfigError
from ctxmodes.host.options import HostOptions
from ctxmodes.providers.script import Script
from ctxmodes.providers.scripted import ScriptedProvider
from ctxmodes.resources import default_loader
from ctxmodes.sdk import Agent, open_agent
from ctxmodes.tui.reload import FAILED, RELOADED


@pytest.fixture
def pi_settings(agent_dir: Path) -> Path:
    path = agent_dir / "settings.json"
    path.write_text("{}")
    return path


def _reloadable(project: Path, cli: dict[str, Any] | None = None) -> ReloadableSettings:
    def read(cwd: Path) -> Settings:
        return load_settings(cwd=cwd, cli=cli).settings

    return ReloadableSettings(read(project), read, project)


def _agent(project: Path, agent_dir: Path, settings: Settings) -> Agent:
    script = Script.model_validate({"responses": [{"text": "answered"}]})
    return open_agent(
        cwd=project,
        settings=settings.model_copy(update={"durability": "flush"}),
        options=HostOptions.of_settings(settings),
        provider=ScriptedProvider(script),
        session_dir=project / "sessions",
        resources=default_loader(approve=True, agent_dir=agent_dir),
    )


def test_the_running_session_takes_what_pi_s_takes_and_later_sessions_the_budgets_too(
    tmp_path: Path, agent_dir: Path, pi_settings: Path
) -> None:
    reloadable = _reloadable(tmp_path)
    agent = _agent(tmp_path, agent_dir, reloadable.settings)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        pi_settings.write_text(
            json.dumps(
                {
                    "steeringMode": "all",
                    "compaction": {"reserveTokens": 1234},
                    "retry": {"maxRetries": 7},
                    "images": {"blockImages": True},
                    "shellCommandPrefix": "set -u",
                    "hideThinkingBlock": False,
                    "autocompleteMaxVisible": 5,
                    "treeFilterMode": "all",
                    "thinkingBudgets": {"low": 999},
                    "defaultTools": ["read"],
                }
            )
        )
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)
        seen["options"] = agent.session.options
        seen["terminal"] = t.session.settings
        seen["shows thinking"] = t.session.live.show_thinking
        agent.new_session()
        seen["next"] = agent.session.options

    run_terminal(agent, scenario, reloadable=reloadable)
    options: HostOptions = seen["options"]
    assert options.steering_mode == "all"
    assert options.compaction.reserve_tokens == 1234
    assert options.retry.max_retries == 7
    assert options.block_images is True
    assert options.shell.command_prefix == "set -u"
    # Pi gives the running agent its budgets once, and picks the tools when it starts.
    assert dict(options.thinking_budgets) == {}
    assert dict(seen["next"].thinking_budgets)["low"] == 999
    assert options.tools == HostOptions.of_settings(Settings()).tools
    assert seen["terminal"].completion_rows == 5
    assert seen["terminal"].tree_filter == "all"
    assert seen["shows thinking"] is True
    assert reloadable.settings.steering_mode == "all"


def test_the_command_line_and_this_run_s_choices_stand(
    tmp_path: Path, agent_dir: Path, pi_settings: Path
) -> None:
    reloadable = _reloadable(tmp_path, {"terminal.quiet_startup": False})
    agent = _agent(tmp_path, agent_dir, reloadable.settings)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        agent.host.change_options(lambda options: options.with_auto_compaction(False))
        await t.type("\x14")  # Ctrl+T: the thinking shown, where the default collapses it
        pi_settings.write_text(
            json.dumps(
                {
                    "quietStartup": True,
                    "hideThinkingBlock": True,
                    "compaction": {"enabled": True, "keepRecentTokens": 4321},
                }
            )
        )
        await t.type("/reload" + ENTER)
        await t.printed(RELOADED)
        seen["options"] = agent.session.options
        seen["terminal"] = t.session.settings
        seen["shows thinking"] = t.session.live.show_thinking

    run_terminal(agent, scenario, reloadable=reloadable)
    assert seen["terminal"].quiet_startup is False
    assert seen["options"].compaction.enabled is False
    assert seen["options"].compaction.keep_recent_tokens == 4321
    assert seen["shows thinking"] is True


@pytest.mark.parametrize("broken", ["{not json", '{"retry": {"maxRetries": "many"}}', "[]"])
def test_a_file_become_invalid_is_the_start_up_error_and_nothing_is_reloaded(
    tmp_path: Path, agent_dir: Path, pi_settings: Path, broken: str
) -> None:
    pi_settings.write_text(json.dumps({"steeringMode": "all"}))
    (tmp_path / "AGENTS.md").write_text("Old rule.")
    reloadable = _reloadable(tmp_path)
    agent = _agent(tmp_path, agent_dir, reloadable.settings)
    seen: dict[str, Any] = {}

    async def scenario(t: Any) -> None:
        before = agent.session.options
        pi_settings.write_text(broken)
        (tmp_path / "AGENTS.md").write_text("New rule.")
        await t.type("/reload" + ENTER)
        await t.printed(FAILED)
        seen["unchanged"] = agent.session.options == before
        seen["prompt"] = agent.session.system_prompt

    text = run_terminal(agent, scenario, reloadable=reloadable).flat()
    with pytest.raises(ConfigError) as start_up:
        load_settings(cwd=tmp_path)
    assert f"{FAILED}{start_up.value}" in text
    assert RELOADED not in text
    assert seen["unchanged"] is True
    assert "Old rule." in seen["prompt"]
    assert reloadable.settings.steering_mode == "all"


def test_a_value_changed_this_run_is_kept_field_by_field() -> None:
    before = Settings().compaction
    after = before.model_copy(update={"reserve_tokens": 1, "keep_recent_tokens": 2})
    current = before.model_copy(update={"enabled": False, "keep_recent_tokens": 3})
    merged = kept_or_reloaded(current, before, after)
    assert (merged.enabled, merged.reserve_tokens, merged.keep_recent_tokens) == (False, 1, 3)
    assert kept_or_reloaded("all", "all", "one-at-a-time") == "one-at-a-time"
    assert kept_or_reloaded("all", "one-at-a-time", "one-at-a-time") == "all"


@pytest.mark.slow  # a real terminal, end to end
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_ctxmodes_chat_reloads_with_its_flags_and_words_a_broken_file_as_its_start(
    tmp_path: Path,
) -> None:
    """The command line's session: ``--verbose`` keeps the listing a reloaded
    ``quietStartup`` would leave out, the default thinking level is the reloaded file's, a
    choice saved in Pi's file says that ctxmodes' own file sets it over Pi's, and a
    ``settings.json`` broken meanwhile is the line the next start stops with."""
    env = private_env(tmp_path)
    pi_file = Path(env["PI_CODING_AGENT_DIR"]) / "settings.json"
    pi_file.parent.mkdir(parents=True, exist_ok=True)
    pi_file.write_text("{}")
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir()
    config.write_text("[terminal]\nhide_thinking = true\n")
    (tmp_path / "AGENTS.md").write_text("Be brief.")
    (tmp_path / "script.json").write_text('{"responses": [{"text": "hi"}]}')
    command = ctxmodes_command("chat", "--verbose", "--model", "scripted:script.json")
    tmux = Tmux(["env", "-C", str(tmp_path), *command], env)
    try:
        tmux.wait("scripted/scripted")
        # Ctrl+T's choice is saved, and said to lose to ctxmodes' own file at the next start.
        tmux.key("C-t")
        # Read without white space: the notice is wrapped to the terminal's width.
        overridden = "".join(
            tmux.until(lambda screen: "whichthenextstarttakes" in "".join(screen.split())).split()
        )
        saved = json.loads(pi_file.read_text())
        pi_file.write_text(json.dumps({"quietStartup": True, "defaultThinkingLevel": "off"}))
        tmux.type("/reload")
        tmux.key("Enter")
        tmux.wait(RELOADED)
        listed = tmux.screen().count("[Context]")
        # The thinking selector marks the default the file names now.
        tmux.type("/thinking")
        tmux.key("Enter")
        marked = tmux.wait("No reasoning · default")
        tmux.key("Escape")
        tmux.until(lambda screen: "Thinking Level" not in screen)
        pi_file.write_text("{not json")
        tmux.type("/reload")
        tmux.key("Enter")
        screen = " ".join(tmux.wait(FAILED).split())
    finally:
        tmux.close()
    start = subprocess.run(
        [*command, "--no-session"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    stopped = start.stderr.strip().removeprefix("ctxmodes: error: ")
    assert start.returncode != 0
    assert f"{FAILED}{stopped}" in screen
    assert listed == 2  # at start-up and after the first reload, --verbose over quietStartup
    assert "✓ off" in marked
    assert saved == {"hideThinkingBlock": False}
    assert "".join(f"Saved, but {config} sets terminal.hide_thinking".split()) in overridden
