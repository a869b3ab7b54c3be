"""``/settings``: the settings a running session can change, with Pi's labels and values;
Enter cycles the selected row and the change applies at once, to this session and to the
ones started after it in the same run, and is saved in Pi's ``settings.json`` as Pi's own
``/settings`` saves it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.agents import make_agent
from support.pi_oracle import PI_PACKAGE, require_pi_modules, run_pi_script
from support.terminal import ENTER, run_terminal

from ctxmodes.tui.settings_menu import SETTINGS, TITLE

DOWN = "j"
ESC = "\x1b"
PI_SAVE = Path(__file__).parents[2] / "support" / "pi_settings_save.mjs"


def _rows(t) -> list[str]:
    return [" ".join(text for _, text in row.fragments).split() for row in t.session.picker.rows()]


@pytest.mark.slow  # Pi's settings manager saves the same choices, in node
def test_each_row_cycles_its_value_the_session_runs_with_it_and_pi_s_file_keeps_it(
    tmp_path: Path, agent_dir: Path
) -> None:
    agent = make_agent(tmp_path, [])
    seen: dict[str, object] = {}

    async def scenario(t):
        await t.type("/settings" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the settings")
        seen["before"] = _rows(t)
        await t.type(ENTER)  # Auto-compact: true -> false
        await t.until(lambda: t.session.picker is not None, "the settings again")
        await t.type(DOWN + ENTER)  # Steering mode -> all
        await t.until(lambda: t.session.picker is not None)
        await t.type(DOWN + DOWN + ENTER)  # Hide thinking: true -> false
        await t.until(lambda: t.session.picker is not None)
        await t.type(DOWN + ENTER)  # Cache miss notices: false -> true
        await t.until(lambda: t.session.picker is not None)
        await t.type(DOWN + DOWN + ENTER)  # Block images: false -> true
        await t.until(lambda: t.session.picker is not None)
        await t.type(DOWN + ENTER)  # Skill commands: true -> false
        await t.until(lambda: t.session.picker is not None)
        await t.type(DOWN + ENTER)  # Anthropic extra usage: true -> false
        await t.until(lambda: t.session.picker is not None)
        seen["after"] = _rows(t)
        seen["selected"] = t.session.picker.selected
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the list to close")
        options = agent.session.options
        seen["options"] = (
            options.compaction.enabled,
            options.steering_mode,
            options.follow_up_mode,
            options.block_images,
        )
        seen["shown"] = (
            t.session.live.show_thinking,
            t.session.transcript.cache_notices.enabled,
            t.session.settings.skill_commands,
            t.session.transcript.extra_usage.enabled,
        )
        # A session started now runs with the changes too.
        await t.type("/new" + ENTER)
        await t.idle()
        options = agent.session.options
        seen["new"] = (options.compaction.enabled, options.steering_mode, options.block_images)

    run_terminal(agent, scenario)
    assert seen["before"] == [
        ["Auto-compact", "true"],
        ["Steering", "mode", "one-at-a-time"],
        ["Follow-up", "mode", "one-at-a-time"],
        ["Hide", "thinking", "true"],
        ["Cache", "miss", "notices", "false"],
        ["Auto-resize", "images", "true"],
        ["Block", "images", "false"],
        ["Skill", "commands", "true"],
        ["Anthropic", "extra", "usage", "true"],
    ]
    assert seen["after"] == [
        ["Auto-compact", "false"],
        ["Steering", "mode", "all"],
        ["Follow-up", "mode", "one-at-a-time"],
        ["Hide", "thinking", "false"],
        ["Cache", "miss", "notices", "true"],
        ["Auto-resize", "images", "true"],
        ["Block", "images", "true"],
        ["Skill", "commands", "false"],
        ["Anthropic", "extra", "usage", "false"],
    ]
    assert seen["selected"] == 8  # the list stays on the row changed last
    assert seen["options"] == (False, "all", "one-at-a-time", True)
    assert seen["shown"] == (True, True, False, False)
    assert seen["new"] == (False, "all", True)
    # The file is the one Pi's /settings saves for the same seven choices.
    pi_agent = tmp_path / "pi-agent"
    pi_agent.mkdir()
    calls = [
        ["setCompactionEnabled", False],
        ["setSteeringMode", "all"],
        ["setHideThinkingBlock", False],
        ["setShowCacheMissNotices", True],
        ["setBlockImages", True],
        ["setEnableSkillCommands", False],
        ["setWarnings", {"anthropicExtraUsage": False}],
    ]
    request = [{"agentDir": str(pi_agent), "cwd": str(tmp_path), "calls": calls}]
    assert run_pi_script(PI_SAVE, json.dumps(request)) == [[]]
    saved = (agent_dir / "settings.json").read_bytes()
    assert saved == (pi_agent / "settings.json").read_bytes()


def test_a_choice_that_cannot_be_saved_still_applies_and_the_file_is_left_alone(
    tmp_path: Path, agent_dir: Path
) -> None:
    settings = agent_dir / "settings.json"
    agent = make_agent(tmp_path, [])
    seen: list[bool] = []

    async def scenario(t):
        await t.type("/settings" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the settings")
        settings.write_text('{"theme": "dark",', "utf-8")  # broken since the start
        await t.type(ENTER)  # Auto-compact: true -> false
        await t.printed("Not saved for the next start")
        seen.append(agent.session.options.compaction.enabled)
        await t.type(ESC)
        await t.until(lambda: t.session.picker is None, "the list to close")

    terminal = run_terminal(agent, scenario)
    assert f"Not saved for the next start: cannot save {settings}: it is not valid JSON" in (
        " ".join(terminal.text().split())
    )
    assert seen == [False]
    assert settings.read_text("utf-8") == '{"theme": "dark",'


def test_escape_changes_nothing(tmp_path: Path, agent_dir: Path) -> None:
    agent = make_agent(tmp_path, [])
    options = [agent.session.options]

    async def scenario(t):
        await t.type("/settings" + ENTER)
        await t.until(lambda: t.session.picker is not None, "the settings")
        assert t.session.picker.title == TITLE
        await t.type(DOWN + ESC)
        await t.until(lambda: t.session.picker is None, "the list to close")
        options.append(agent.session.options)

    run_terminal(agent, scenario)
    assert options[1] == options[0]
    assert not (agent_dir / "settings.json").exists()


def test_the_labels_and_values_are_pis() -> None:
    """Each row is a row of Pi's settings list (``settings-selector.js``), with its
    values in Pi's order."""
    dist = require_pi_modules() / PI_PACKAGE.parent / "dist"
    source = (dist / "modes" / "interactive" / "components" / "settings-selector.js").read_text()
    for setting in SETTINGS:
        at = source.index(f'label: "{setting.label}"')
        item = source[at : source.index("label: ", at + 1)]
        values = re.search(r"values: \[([^\]]*)\]", item)
        if values is not None:
            pis = tuple(re.findall(r'"([^"]+)"', values.group(1)))
        else:  # a switch: Pi's list toggles it between true and false
            assert '? "true" : "false"' in item, setting.label
            pis = ("true", "false")
        assert setting.values == pis, setting.label
