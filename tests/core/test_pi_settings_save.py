"""Saving choices in Pi's global ``settings.json``: the file ctxmodes writes is, byte for
byte, the one the real Pi's ``SettingsManager`` writes for the same choices on the same
file (``pi_settings_save.mjs``), and a file that cannot be saved to is left as it was."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from support.pi_oracle import run_pi_script

from ctxmodes import pi_settings_save
from ctxmodes.errors import ConfigError
from ctxmodes.pi_settings_save import REMOVE, Change, save_choice, save_pi_settings

SCRIPT = Path(__file__).parents[1] / "support" / "pi_settings_save.mjs"

#: Pi's setter and its arguments → the keys ctxmodes changes for the same choice.
_SETTERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "setCompactionEnabled": (("compaction", "enabled"),),
    "setHideThinkingBlock": (("hideThinkingBlock",),),
    "setEnabledModels": (("enabledModels",),),
    "setSteeringMode": (("steeringMode",),),
    "setFollowUpMode": (("followUpMode",),),
    "setImageAutoResize": (("images", "autoResize"),),
    "setBlockImages": (("images", "blockImages"),),
    "setEnableSkillCommands": (("enableSkillCommands",),),
    "setRetryEnabled": (("retry", "enabled"),),
    "setDefaultThinkingLevel": (("defaultThinkingLevel",),),
    "setDefaultModelAndProvider": (("defaultProvider",), ("defaultModel",)),
}

_LEGACY = (
    '\ufeff{"queueMode": "all", "websockets": true, "1": 2, "x": 1.0, "y": 1e-7,'
    ' "big": 12345678901234567890, "skills": {"enableSkillCommands": false,'
    ' "customDirectories": ["~/skills"]}, "retry": {"maxDelayMs": 5, "provider": {"a": 1}},'
    ' "name": "caf\\u00e9 \\u2028 \\u0007 \\ud800", "compaction": {"reserveTokens": 1000}}'
)

#: (the file before, or None for none; Pi's setter calls in order).
CASES: list[tuple[str | None, list[list[object]]]] = [
    (None, [["setHideThinkingBlock", True]]),
    (
        _LEGACY,
        [["setCompactionEnabled", False], ["setEnabledModels", ["anthropic/*", "openai/gpt-5.1"]]],
    ),
    (
        '{"compaction": null, "images": {"blockImages": false}, "skills": {}}',
        [["setImageAutoResize", False], ["setBlockImages", True], ["setCompactionEnabled", True]],
    ),
    ('{"enabledModels": ["a/b"], "theme": "dark"}', [["setEnabledModels", "<undefined>"]]),
    (
        '{"retry": {"maxRetries": 5}, "steeringMode": "one-at-a-time"}',
        [
            ["setSteeringMode", "all"],
            ["setFollowUpMode", "all"],
            ["setEnableSkillCommands", False],
            ["setRetryEnabled", False],
            ["setDefaultThinkingLevel", "high"],
            ["setDefaultModelAndProvider", "anthropic", "claude-sonnet-4-5"],
        ],
    ),
    ("{}", [["setHideThinkingBlock", False], ["setHideThinkingBlock", True]]),
]


def _changes(calls: list[list[object]]) -> list[Change]:
    changes: list[Change] = []
    for name, *arguments in calls:
        for keys, value in zip(_SETTERS[str(name)], arguments, strict=True):
            changes.append((keys, REMOVE if value == "<undefined>" else value))
    return changes


@pytest.mark.slow  # one node process runs Pi's settings manager on every case
def test_the_saved_file_is_the_one_pi_saves(tmp_path: Path) -> None:
    requests = []
    ours: list[Path] = []
    for index, (before, calls) in enumerate(CASES):
        for side in ("pi", "ctxmodes"):
            agent = tmp_path / f"{side}{index}" / "agent"
            agent.mkdir(parents=True)
            if before is not None:
                (agent / "settings.json").write_text(before, "utf-8")
        requests.append(
            {
                "agentDir": str(tmp_path / f"pi{index}" / "agent"),
                "cwd": str(tmp_path),
                "calls": calls,
            }
        )
        target = tmp_path / f"ctxmodes{index}" / "agent" / "settings.json"
        for change in _changes(calls):  # one save per choice, as each choice is made
            save_pi_settings([change], target)
        ours.append(target)
    errors = run_pi_script(SCRIPT, json.dumps(requests))
    assert errors == [[] for _ in CASES]
    for index, target in enumerate(ours):
        theirs = tmp_path / f"pi{index}" / "agent" / "settings.json"
        assert target.read_bytes() == theirs.read_bytes(), CASES[index]


def test_a_link_to_the_file_is_kept_and_so_is_its_mode(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"theme": "dark"}', "utf-8")
    real.chmod(0o600)
    link = tmp_path / "agent" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    save_pi_settings([(("hideThinkingBlock",), True)], link)
    assert link.is_symlink()
    assert json.loads(real.read_text("utf-8")) == {"theme": "dark", "hideThinkingBlock": True}
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("before", "reason"),
    [
        ('{"theme": "dark",', "it is not valid JSON"),
        ("[1, 2]", "Pi's settings must be a JSON object"),
        ('{"compaction": "off"}', "compaction is not an object"),
    ],
)
def test_a_file_that_cannot_be_saved_to_is_left_as_it_was(
    tmp_path: Path, before: str, reason: str
) -> None:
    target = tmp_path / "settings.json"
    target.write_text(before, "utf-8")
    with pytest.raises(ConfigError, match=f"cannot save {target}: {reason}"):
        save_pi_settings([(("compaction", "enabled"), False)], target)
    assert target.read_text("utf-8") == before
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_a_saved_key_another_source_sets_is_said_with_that_source(agent_dir: Path) -> None:
    """The next start takes ctxmodes' own files, a project's, the environment or the
    command line over Pi's global file: a choice saved there is then said to lose."""
    said: list[tuple[str, str]] = []
    origins = {
        "terminal.hide_thinking": "/home/me/.config/ctxmodes/config.toml",
        "model": f"{agent_dir / 'settings.json'} (Pi's defaultProvider and defaultModel)",
        "compaction.enabled": "default",
    }
    changes: list[Change] = [
        (("hideThinkingBlock",), True),
        (("defaultProvider",), "loop"),
        (("defaultModel",), "deep"),
        (("compaction", "enabled"), False),
    ]
    assert save_choice(changes, lambda *line: said.append(line), origins)
    assert said == [
        (
            "Saved, but /home/me/.config/ctxmodes/config.toml sets terminal.hide_thinking, "
            "which the next start takes",
            "warning",
        )
    ]
    saved = json.loads((agent_dir / "settings.json").read_text())
    assert saved == {
        "hideThinkingBlock": True,
        "defaultProvider": "loop",
        "defaultModel": "deep",
        "compaction": {"enabled": False},
    }


def test_a_project_s_pi_file_is_named_with_pi_s_key_and_each_source_is_said_once(
    agent_dir: Path,
) -> None:
    said: list[tuple[str, str]] = []
    origins = {
        "model": "/work/app/.pi/settings.json (Pi's defaultProvider and defaultModel)",
        "steering_mode": "environment",
    }
    changes: list[Change] = [
        (("defaultProvider",), "loop"),
        (("defaultModel",), "deep"),
        (("steeringMode",), "all"),
    ]
    assert save_choice(changes, lambda *line: said.append(line), origins)
    assert [line for line, _ in said] == [
        "Saved, but /work/app/.pi/settings.json sets defaultProvider and defaultModel, "
        "which the next start takes",
        "Saved, but the environment sets steering_mode, which the next start takes",
    ]


def test_a_lock_another_process_holds_refuses_the_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Refused once the wait for the lock is over: a short wait keeps the test short.
    monkeypatch.setattr(pi_settings_save, "_LOCK_TIMEOUT_S", 0.05)
    target = tmp_path / "settings.json"
    target.write_text("{}", "utf-8")
    (tmp_path / "settings.json.lock").mkdir()
    with pytest.raises(ConfigError, match="is locked by another process"):
        save_pi_settings([(("hideThinkingBlock",), True)], target)
    assert target.read_text("utf-8") == "{}"
