"""Pi's ``skills`` and ``prompts`` settings: what each file lists, and a clear one-line error
for a value Pi cannot read (Pi itself stops with a stack trace on most of them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxmodes.errors import ConfigError
from ctxmodes.resources import load_resources
from ctxmodes.resources.settings_entries import SettingsEntries, settings_entries


def settings(tmp_path: Path, values: Any) -> Path:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(values))
    return path


def test_arrays_of_strings_are_read_as_written(tmp_path: Path) -> None:
    path = settings(tmp_path, {"skills": ["../a", "!b*", "+c", "-d"], "prompts": ["~/p"]})
    assert settings_entries(path) == SettingsEntries(("../a", "!b*", "+c", "-d"), ("~/p",))


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"skills": None, "prompts": None},
        {"skills": {"enableSkillCommands": True}},
        {"skills": {"customDirectories": []}},
        {"skills": {"customDirectories": "not a list: dropped, as Pi migrates it"}},
    ],
)
def test_unset_null_and_empty_legacy_forms_add_nothing(tmp_path: Path, values: Any) -> None:
    assert settings_entries(settings(tmp_path, values)) == SettingsEntries()


def test_the_legacy_skills_object_lists_its_custom_directories(tmp_path: Path) -> None:
    path = settings(tmp_path, {"skills": {"customDirectories": ["~/old-skills"]}})
    assert settings_entries(path).skills == ("~/old-skills",)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            {"skills": "~/skills"},
            'skills: expected an array of paths and patterns (strings), got a string ("~/skills")',
        ),
        (
            {"prompts": {"dir": "x"}},
            "prompts: expected an array of paths and patterns (strings), got an object",
        ),
        (
            {"prompts": ["ok", 3]},
            "prompts[1]: expected a path or pattern (a string), got a number (3)",
        ),
        ({"skills": [None]}, "skills[0]: expected a path or pattern (a string), got null"),
        (
            {"skills": {"customDirectories": [True]}},
            "skills.customDirectories[0]: expected a "
            "path or pattern (a string), got a boolean (true)",
        ),
    ],
)
def test_a_value_of_the_wrong_type_names_the_file_and_the_key(
    tmp_path: Path, values: Any, expected: str
) -> None:
    path = settings(tmp_path, values)
    with pytest.raises(ConfigError) as raised:
        settings_entries(path)
    assert str(raised.value) == f"{path}: {expected}"


def test_a_project_file_is_read_only_when_the_project_is_trusted(tmp_path: Path) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    config = project / ".pi"
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"prompts": "not read when untrusted"}))
    loaded = load_resources(project, agent, trusted=False, home=tmp_path)
    assert loaded.templates == ()
    with pytest.raises(ConfigError, match=r"settings\.json: prompts: expected an array"):
        load_resources(project, agent, trusted=True, home=tmp_path)
