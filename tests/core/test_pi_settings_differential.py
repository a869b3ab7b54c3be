"""The real Pi reads the same settings files the same way: for each tree of a global and a
project ``settings.json`` (trusted or not), the values ctxmodes takes from them are the ones
Pi's ``SettingsManager`` and ``createAgentSession`` start with (``pi_settings.mjs``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli_rig import pi_agent_dir
from support.pi_oracle import PI_PACKAGE, require_agent_node, require_pi_modules

from ctxmodes.config import load_settings
from ctxmodes.errors import ConfigError
from ctxmodes.host.options import HostOptions

SCRIPT = Path(__file__).parents[1] / "support" / "pi_settings.mjs"
MODELS = {
    "providers": {
        "local": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "local-key",
            "models": [{"id": "m", "reasoning": True}],
        }
    }
}
#: (global settings, project settings): defaults, each honoured key, Pi's legacy keys, the
#: values Pi reads as others, and a project key over the global one.
TREES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({}, {}),
    (
        {
            "defaultThinkingLevel": "high",
            "steeringMode": "all",
            "followUpMode": "all",
            "compaction": {"enabled": False, "reserveTokens": 8192, "keepRecentTokens": 3000},
            "branchSummary": {"reserveTokens": 4000, "skipPrompt": True},
            "retry": {
                "enabled": False,
                "maxRetries": 5,
                "baseDelayMs": 500,
                "provider": {"timeoutMs": 90000, "maxRetries": 2, "maxRetryDelayMs": 7000},
            },
            "enableSkillCommands": False,
            "treeFilterMode": "labeled-only",
            "doubleEscapeAction": "none",
            "externalEditor": "code --wait",
            "quietStartup": True,
            "hideThinkingBlock": False,
            "images": {"blockImages": True, "autoResize": False},
            "shellPath": "~/bin/bash",
            "shellCommandPrefix": "shopt -s expand_aliases\nalias ll='ls -l'",
        },
        {},
    ),
    (
        {"defaultThinkingLevel": "extreme", "queueMode": "all", "retry": {"maxDelayMs": 9000}},
        {
            "followUpMode": "batch",
            "httpIdleTimeoutMs": "disabled",
            "treeFilterMode": "x",
            "doubleEscapeAction": "x",
        },
    ),
    (
        {"defaultThinkingLevel": "", "httpIdleTimeoutMs": 45000.9},
        {"compaction": {"reserveTokens": 1000}, "retry": {"maxRetries": None}},
    ),
    ({"retry": {"provider": {"timeoutMs": 7000}}}, {"httpIdleTimeoutMs": 5000}),
    ({"httpIdleTimeoutMs": " 0x1f40 "}, {"httpIdleTimeoutMs": "6e3"}),
    ({"externalEditor": "vim"}, {"externalEditor": "  "}),
    ({"doubleEscapeAction": "fork"}, {}),
    ({"doubleEscapeAction": "fork"}, {"doubleEscapeAction": "tree"}),
    ({"shellPath": "~", "shellCommandPrefix": "set -e"}, {"shellPath": "/opt/bash"}),
    ({"shellPath": "/opt/bash", "shellCommandPrefix": "set -e"}, {"shellCommandPrefix": ""}),
    ({"shellPath": "/opt/bash"}, {"shellPath": ""}),
    ({"steeringMode": None, "queueMode": "all"}, {"retry": {"maxDelayMs": 8000}}),
    ({"retry": {"maxDelayMs": 8000, "provider": {"maxRetryDelayMs": None}}}, {}),
    ({"skills": {"enableSkillCommands": False, "customDirectories": ["x"]}}, {}),
    ({"enableSkillCommands": False}, {"skills": {"enableSkillCommands": True}}),
    ({"skills": ["x"], "enableSkillCommands": False}, {"skills": ["y"]}),
    ({"skills": {"enableSkillCommands": False}, "enableSkillCommands": None}, {}),
    (
        {"defaultThinkingLevel": "low", "compaction": {"enabled": False, "reserveTokens": 9}},
        {"defaultThinkingLevel": "medium", "compaction": {"reserveTokens": 10}},
    ),
    (
        {"thinkingBudgets": {"minimal": 512, "low": 3000, "high": 20000, "xhigh": 9}},
        {"thinkingBudgets": {"low": 100}},
    ),
    # A project's list replaces the global one.
    ({"enabledModels": ["local/*", "m:high"]}, {"enabledModels": ["local/m"]}),
    ({"enabledModels": ["local/m:low"]}, {}),
    ({"enabledModels": ["local/m:low"]}, {"enabledModels": None}),
    ({"defaultTools": ["read", "bash", "grep"]}, {"defaultTools": ["read"]}),
    ({"defaultTools": []}, {}),
    ({"defaultTools": ["read"]}, {"defaultTools": None}),
    # A project's null replaces the global value, which Pi's default then stands in for:
    # top-level scalars, nested ones, whole tables, a nested table.
    (
        {"defaultThinkingLevel": "high", "quietStartup": True, "hideThinkingBlock": True},
        {"defaultThinkingLevel": None, "quietStartup": None, "hideThinkingBlock": None},
    ),
    (
        {"retry": {"maxRetries": 5, "baseDelayMs": 500}, "compaction": {"reserveTokens": 9000}},
        {"retry": {"maxRetries": None}, "compaction": {"reserveTokens": None}},
    ),
    (
        {
            "retry": {
                "enabled": False,
                "maxRetries": 5,
                "provider": {"timeoutMs": 9000, "maxRetries": 2, "maxRetryDelayMs": 7000},
            },
            "images": {"blockImages": True, "autoResize": False},
            "thinkingBudgets": {"low": 100, "high": 9000},
            "branchSummary": {"skipPrompt": True},
        },
        {"retry": None, "images": None, "thinkingBudgets": None, "branchSummary": None},
    ),
    ({"retry": {"maxRetries": 5, "provider": {"timeoutMs": 9000}}}, {"retry": {"provider": None}}),
    # Legacy keys, each migrated in its own file before the merge.
    (
        {"queueMode": "all", "retry": {"maxDelayMs": 9000}, "enableSkillCommands": False},
        {
            "steeringMode": None,
            "retry": {"provider": {"maxRetryDelayMs": None}},
            "skills": {"enableSkillCommands": None},
        },
    ),
    ({"steeringMode": "all", "skills": {"enableSkillCommands": False}}, {"queueMode": None}),
    ({"retry": {"provider": {"maxRetryDelayMs": 7000}}}, {"retry": {"maxDelayMs": 3000}}),
    # The startup model, the request timeout, per-model levels, Esc Esc and the rest.
    ({}, {"defaultModel": None}),
    ({}, {"defaultProvider": None}),
    ({"modelThinkingLevels": {"local/m": "high"}}, {"modelThinkingLevels": {"local/m": None}}),
    ({"modelThinkingLevels": {"local/m": "low", "other/x": "high"}}, {"modelThinkingLevels": None}),
    (
        {"doubleEscapeAction": "none", "treeFilterMode": "all"},
        {"doubleEscapeAction": None, "treeFilterMode": None},
    ),
    (
        {"externalEditor": "vim", "shellPath": "/opt/bash", "shellCommandPrefix": "set -e"},
        {"externalEditor": None, "shellPath": None, "shellCommandPrefix": None},
    ),
    (
        {"sessionDir": "/srv/pi-sessions", "enableSkillCommands": False},
        {"sessionDir": None, "enableSkillCommands": None},
    ),
]


def _run_pi(node: str, package: Path, agent: Path, cwd: Path, trusted: bool) -> Any:
    return subprocess.run(
        [node, str(SCRIPT), str(package), str(agent), str(cwd), "1" if trusted else "0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _pi(node: str, package: Path, agent: Path, cwd: Path, trusted: bool) -> dict[str, Any]:
    result = _run_pi(node, package, agent, cwd, trusted)
    assert result.returncode == 0, result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    assert answer["errors"] == []
    return answer


def _ours(agent: Path, cwd: Path, trusted: bool) -> dict[str, Any]:
    settings = load_settings(
        cwd=cwd, environ={"CTXMODES_CONFIG_DIR": str(cwd / "no-config")}, trust=lambda _: trusted
    ).settings
    provider = settings.retry.provider
    # The shell as the tools get it: through the host's options, its path as they start it.
    shell = HostOptions.of_settings(settings).shell
    return {
        "model": settings.model,
        "modelThinkingLevels": settings.model_thinking_levels,
        "sessionDir": settings.session_dir,
        # A new session's level, as the host picks it: its model's, else the default.
        "thinkingLevel": settings.model_thinking_levels.get(settings.model or "")
        or settings.thinking_level,
        "steeringMode": settings.steering_mode,
        "followUpMode": settings.follow_up_mode,
        "compaction": settings.compaction.model_dump(by_alias=True),
        "branchSummary": settings.branch_summary.model_dump(by_alias=True),
        "retry": {
            "enabled": settings.retry.enabled,
            "maxRetries": settings.retry.max_retries,
            "baseDelayMs": settings.retry.base_delay_ms,
        },
        "providerRetry": {
            "timeoutMs": provider.timeout_ms,
            "maxRetries": provider.max_retries,
            "maxRetryDelayMs": provider.max_retry_delay_ms,
        },
        "enableSkillCommands": settings.terminal.skill_commands,
        "treeFilterMode": settings.terminal.tree_filter,
        "doubleEscapeAction": settings.terminal.double_escape_action,
        # $VISUAL and $EDITOR are unset for both: Pi's last resort is nano.
        "externalEditor": settings.terminal.external_editor or "nano",
        "quietStartup": settings.terminal.quiet_startup,
        "hideThinkingBlock": settings.terminal.hide_thinking,
        "blockImages": settings.block_images,
        "autoResizeImages": settings.auto_resize_images,
        "thinkingBudgets": settings.thinking_budgets.by_level(),
        "shellPath": shell.configured_program(cwd),
        "shellCommandPrefix": shell.command_prefix,
        "enabledModels": settings.enabled_models,
        "defaultTools": settings.default_tools,
    }


def _as_ctxmodes_reads(pi: dict[str, Any]) -> dict[str, Any]:
    """Pi's answer where ctxmodes has one value for what Pi leaves open: a delivery mode
    other than ``all`` delivers one at a time (pi-agent-core's queue); the request timeout
    is ``retry.provider.timeoutMs``, else ``httpIdleTimeoutMs`` (``0``: none, passed as the
    longest 32-bit delay); an unset transport retry count is ctxmodes' default, 0; an empty
    shell path or prefix is none (Pi tests both for truth before using them); a
    ``doubleEscapeAction`` is what Pi's Esc Esc does with it; a model's ``null`` level is
    none, as Pi's startup passes over it; the model is the one the files name (``None``
    when they name none, as ctxmodes' host chooses then)."""
    provider = pi["providerRetry"]
    idle = pi["httpIdleTimeoutMs"]
    if pi["startupModel"] is not None:
        assert pi["model"] == pi["startupModel"]  # the session started on the named model
    return {
        "model": pi["startupModel"],
        "modelThinkingLevels": {
            model: level for model, level in pi["modelThinkingLevels"].items() if level is not None
        },
        "sessionDir": pi["sessionDir"],
        "thinkingLevel": pi["thinkingLevel"],
        "steeringMode": "all" if pi["steeringMode"] == "all" else "one-at-a-time",
        "followUpMode": "all" if pi["followUpMode"] == "all" else "one-at-a-time",
        "compaction": pi["compaction"],
        "branchSummary": pi["branchSummary"],
        "retry": pi["retry"],
        "providerRetry": {
            "timeoutMs": provider.get("timeoutMs", idle or 2**31 - 1),
            "maxRetries": provider.get("maxRetries", 0),
            "maxRetryDelayMs": provider["maxRetryDelayMs"],
        },
        "enableSkillCommands": pi["enableSkillCommands"],
        "treeFilterMode": pi["treeFilterMode"],
        # What Pi's Esc Esc does with it: the tree, nothing, or the fork selector.
        "doubleEscapeAction": (
            pi["doubleEscapeAction"] if pi["doubleEscapeAction"] in ("tree", "none") else "fork"
        ),
        "externalEditor": pi["externalEditor"],
        "quietStartup": pi["quietStartup"],
        # Unset, Pi shows thinking (false) where ctxmodes collapses it (true).
        "hideThinkingBlock": pi["hideThinkingBlock"] if pi["hideThinkingBlockSet"] else True,
        "blockImages": pi["blockImages"],
        "autoResizeImages": pi["autoResizeImages"],
        # The levels Pi's transports look a budget up by (``xhigh`` and ``max`` use high's).
        "thinkingBudgets": {
            level: budget
            for level, budget in (pi["thinkingBudgets"] or {}).items()
            if level in ("minimal", "low", "medium", "high")
        },
        "shellPath": pi["shellPath"] or None,
        "shellCommandPrefix": pi["shellCommandPrefix"] or None,
        # No list and an empty one both leave every model in the cycle.
        "enabledModels": pi["enabledModels"] or [],
        "defaultTools": pi["defaultTools"],
    }


def _tree(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    global_settings: dict[str, Any],
    project_settings: dict[str, Any],
) -> tuple[str, Path, Path, Path]:
    """Pi's node and package, and the agent directory and project holding the two files."""
    node = require_agent_node()
    modules = require_pi_modules()
    package = (modules / PI_PACKAGE).parent
    agent = pi_agent_dir(tmp_path, monkeypatch)
    for name in ("VISUAL", "EDITOR"):
        monkeypatch.delenv(name, raising=False)
    (agent / "models.json").write_text(json.dumps(MODELS))
    # Every tree names the model, so that Pi clamps the thinking level to a real one.
    startup = {"defaultProvider": "local", "defaultModel": "m"}
    (agent / "settings.json").write_text(json.dumps({**startup, **global_settings}))
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(json.dumps(project_settings))
    return node, package, agent, project


@pytest.mark.pi
@pytest.mark.parametrize(("global_settings", "project_settings"), TREES)
def test_ctxmodes_starts_with_what_pi_starts_with(
    global_settings, project_settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node, package, agent, project = _tree(tmp_path, monkeypatch, global_settings, project_settings)
    for trusted in (True, False):
        pi = _as_ctxmodes_reads(_pi(node, package, agent, project, trusted))
        assert _ours(agent, project, trusted) == pi, trusted


#: Trees whose merged ``httpIdleTimeoutMs`` Pi refuses when the project is trusted, and
#: whether it also does when only the global file is read.
REFUSED_IDLE_TIMEOUTS = [
    ({"httpIdleTimeoutMs": 5000}, {"httpIdleTimeoutMs": None}, False),
    ({}, {"httpIdleTimeoutMs": "  "}, False),
    ({}, {"httpIdleTimeoutMs": "1_000"}, False),
    ({"httpIdleTimeoutMs": "Infinity"}, {}, True),
    ({"httpIdleTimeoutMs": None}, {"retry": {"maxRetries": 1}}, True),
]


@pytest.mark.pi
@pytest.mark.parametrize(
    ("global_settings", "project_settings", "global_refused"), REFUSED_IDLE_TIMEOUTS
)
def test_an_idle_timeout_pi_refuses_stops_ctxmodes_too(
    global_settings,
    project_settings,
    global_refused,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pi's ``getHttpIdleTimeoutMs`` throws on a merged value it cannot read, ``null`` and a
    blank text included, and Pi stops at startup; ctxmodes names the file in force."""
    node, package, agent, project = _tree(tmp_path, monkeypatch, global_settings, project_settings)
    for trusted in (True, False):
        result = _run_pi(node, package, agent, project, trusted)
        if trusted or global_refused:
            assert result.returncode != 0
            assert "Invalid httpIdleTimeoutMs setting" in result.stderr
            in_force = project / ".pi" if trusted and not global_refused else agent
            with pytest.raises(ConfigError) as raised:
                _ours(agent, project, trusted)
            assert str(raised.value).startswith(
                f"{in_force / 'settings.json'}: httpIdleTimeoutMs: "
            )
        else:
            assert result.returncode == 0, result.stderr
            pi = _as_ctxmodes_reads(json.loads(result.stdout))
            assert _ours(agent, project, trusted) == pi
